-- Telling the person when bravebot needs them while they look elsewhere: whether Neovim has the
-- focus (FocusLost/FocusGained, where the terminal reports them), whether a session's chat is on
-- screen, a notification when a turn ends out of sight, and a statusline component the person
-- places themselves (`require('bravebot').statusline()`).
local M = {}

--- Whether Neovim has the focus. Until the terminal says otherwise it is taken to have it: a
--- terminal that never reports focus leaves the chat's visibility to decide.
M.focused = true

local watching = false

--- Start following the focus (once; the client does it when it starts).
function M.watch()
  if watching then
    return
  end
  watching = true
  local group = vim.api.nvim_create_augroup('bravebot_attention', { clear = true })
  vim.api.nvim_create_autocmd('FocusLost', {
    group = group,
    callback = function() M.focused = false end,
  })
  vim.api.nvim_create_autocmd('FocusGained', {
    group = group,
    callback = function() M.focused = true end,
  })
end

--- Whether the chat of `session_id` shows in a window of the current tab page.
function M.chat_visible(state, session_id)
  local ok, buf = pcall(require('bravebot.chat').buf, state, session_id)
  if not ok or not buf or not vim.api.nvim_buf_is_valid(buf) then
    return false
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return true
    end
  end
  return false
end

--- Whether the person is looking at that session's chat in a focused Neovim.
function M.looking(state, session_id)
  return M.focused and M.chat_visible(state, session_id)
end

local function enabled(kind)
  local notify = require('bravebot.config').options.notify
  if type(notify) ~= 'table' then
    return notify ~= false
  end
  return notify[kind] ~= false
end

--- Whether questions are notified (`notify.questions`).
function M.questions_on()
  return enabled('questions')
end

--- A turn ended: tell the person when they are not looking at its chat (and `notify.turn_end`).
--- A turn they cancelled tells them nothing.
function M.turn_ended(state, session_id, stop_reason)
  M.changed()
  if stop_reason == 'cancelled' or not enabled('turn_end') or M.looking(state, session_id) then
    return
  end
  local words = ({ endTurn = 'done', maxRounds = 'stopped after too many rounds', error = 'failed' })[stop_reason]
    or tostring(stop_reason)
  vim.notify('bravebot: the turn ended (' .. words .. '); :Bravebot chat shows it', vim.log.levels.INFO)
end

local function plural(n, word)
  return string.format('%d %s%s', n, word, n == 1 and '' or 's')
end

--- The statusline component: `bravebot: 1 question` while questions wait, `bravebot: working`
--- while a turn runs, and an empty string otherwise. Put `%{v:lua.require'bravebot'.statusline()}`
--- in 'statusline', or call it from a statusline plugin.
function M.statusline()
  local waiting = #require('bravebot.questions').pending
  if waiting > 0 then
    return 'bravebot: ' .. plural(waiting, 'question')
  end
  for _, state in pairs(require('bravebot.client').states or {}) do
    if state.busy then
      return 'bravebot: working'
    end
  end
  return ''
end

--- What the statusline shows may have changed: redraw it, and let statusline plugins know
--- (`User BravebotStatus`).
function M.changed()
  vim.schedule(function()
    pcall(vim.cmd.redrawstatus, { bang = true })
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'BravebotStatus', modeline = false })
  end)
end

return M
