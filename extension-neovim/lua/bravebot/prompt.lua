-- Where the person types a prompt: the prompt area under the chat window and the :Bravebot ask
-- float share the keys, the `@path` completion and one history per workspace root.
local config = require('bravebot.config')

local M = {}

---@type table<string, { text: string, time: integer, recorded: boolean }[]> the prompts sent from
--- each root, oldest first; `recorded` when the server keeps them in its history (not incognito)
M.history = {}
---@type table<integer, string[]> the history a buffer is stepping through, oldest first
M.stepping = {}
---@type table<string, string[]> what the float held when it was closed unsent, by root
M.drafts = {}
---@type table<string, integer> the prompt area's buffer, by root
M.bufs = {}

local function keymaps()
  return config.options.keymaps or {}
end

--- A key as it is typed: <Leader> and <LocalLeader> replaced by the keys they stand for.
function M.key_text(lhs)
  if type(lhs) ~= 'string' then
    return nil
  end
  local function shown(k)
    return k == ' ' and '<Space>' or k
  end
  local leader = vim.g.mapleader or '\\'
  local localleader = vim.g.maplocalleader or '\\'
  return (lhs:gsub('<[Ll]ocal[Ll]eader>', function() return shown(localleader) end)
    :gsub('<[Ll]eader>', function() return shown(leader) end))
end

--- The keys of the prompt, in words, for a window's title or winbar.
--- With `short`, as few words as fit a narrow window's winbar.
function M.hint(short)
  local km = keymaps()
  if short then
    local parts = {}
    local send = vim.tbl_filter(function(k) return k ~= nil end, { M.key_text(km.send), M.key_text(km.send_normal) })
    table.insert(parts, (#send > 0 and table.concat(send, '/') or ':Bravebot send') .. ' sends')
    if km.history_prev and km.history_next then
      table.insert(parts, M.key_text(km.history_prev) .. '/' .. M.key_text(km.history_next) .. ' history')
    end
    table.insert(parts, '@path points at a file')
    return table.concat(parts, ' · ')
  end
  local parts = {}
  local send = {}
  if km.send then
    table.insert(send, M.key_text(km.send))
  end
  if km.send_normal then
    table.insert(send, M.key_text(km.send_normal) .. ' (Normal mode)')
  end
  if #send > 0 then
    table.insert(parts, table.concat(send, ' or ') .. ' sends')
  else
    table.insert(parts, ':Bravebot send sends')
  end
  if km.history_prev and km.history_next then
    table.insert(parts, M.key_text(km.history_prev) .. '/' .. M.key_text(km.history_next) .. ' history')
  end
  table.insert(parts, '@path points at a file')
  return table.concat(parts, ', ')
end

--- Split `@path` words out of a prompt: the text is kept as typed, the paths are sent as mentions.
function M.parse(text)
  local files = {}
  for path in text:gmatch('@(%S+)') do
    table.insert(files, path)
  end
  return text, files
end

local function text_of(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

local function set_text(buf, text)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text or '', '\n', { plain = true }))
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    local n = vim.api.nvim_buf_line_count(buf)
    local last = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
    pcall(vim.api.nvim_win_set_cursor, win, { n, #last })
  end
end

--- Send what `buf` holds. The text stays where it is unless the turn started.
---@return boolean sent
function M.send(buf, root)
  local text = text_of(buf)
  if vim.trim(text) == '' then
    vim.notify('bravebot: type a prompt first')
    return false
  end
  local t, files = M.parse(text)
  -- `@path`s are mentions: the agent is told of them; they vouch for nothing (PROTO-30).
  if not require('bravebot.client').prompt(t, nil, nil, files) then
    return false
  end
  local h = M.history[root] or {}
  M.history[root] = h
  local client = require('bravebot.client')
  local state = client.states[root]
  local recorded = not (state and state.session_id and client.incognito[state.session_id])
  table.insert(h, { text = text, time = os.time(), recorded = recorded })
  vim.b[buf].bravebot_history_at = nil
  M.stepping[buf] = nil
  set_text(buf, '')
  return true
end

--- Step through the root's history: -1 the older prompt, +1 the newer; past the newest, the text
--- that was being typed comes back.
--- The prompts to step through, oldest first: the server's history of every session
--- (`bravebot/history/list`) merged by time with what this editor sent that the server did not
--- keep (an incognito session's), the same prompt twice in a row kept once.
function M.entries(root)
  local client = require('bravebot.client')
  local state = client.states[root]
  if not (state and client.client_of(state)) then
    state = client.ensure(root)
  end
  local server = state and client.history(state, 1000) or {}
  local all = {}
  for i = #server, 1, -1 do
    local e = server[i]
    if type(e) == 'table' and type(e.text) == 'string' then
      table.insert(all, { text = e.text, time = tonumber(e.time) or 0 })
    end
  end
  for _, e in ipairs(M.history[root] or {}) do
    if #server == 0 or not e.recorded then
      table.insert(all, { text = e.text, time = e.time })
    end
  end
  for i, e in ipairs(all) do
    e.n = i
  end
  table.sort(all, function(a, b)
    if a.time ~= b.time then
      return a.time < b.time
    end
    return a.n < b.n
  end)
  local out = {}
  for _, e in ipairs(all) do
    if out[#out] ~= e.text then
      table.insert(out, e.text)
    end
  end
  return out
end

function M.recall(buf, root, dir)
  local at = vim.b[buf].bravebot_history_at
  if at == nil then
    if dir > 0 then
      return
    end
    M.stepping[buf] = M.entries(root)
  end
  local h = M.stepping[buf] or {}
  if #h == 0 then
    return
  end
  if at == nil then
    vim.b[buf].bravebot_typing = text_of(buf)
    at = #h
  else
    at = at + dir
  end
  if at < 1 then
    at = 1
  end
  if at > #h then
    vim.b[buf].bravebot_history_at = nil
    set_text(buf, vim.b[buf].bravebot_typing or '')
    return
  end
  vim.b[buf].bravebot_history_at = at
  set_text(buf, h[at])
end

--- Completes the `@path` under the cursor with files under the working directory.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
    local at = line:match('.*()@%S*$')
    return at and at or -3
  end
  return M.complete_files(base)
end

function M.complete_files(prefix)
  local out = {}
  for _, f in ipairs(vim.fn.globpath('.', (prefix ~= '' and prefix or '') .. '*', false, true)) do
    f = f:gsub('^%./', '')
    if vim.fn.isdirectory(f) == 1 then
      f = f .. '/'
    end
    table.insert(out, f)
  end
  return out
end

--- The prompt keys in `buf`: send, history, and `@` offering files without inserting one.
---@param after_send? fun()
function M.setup_buffer(buf, root, after_send)
  vim.bo[buf].filetype = 'bravebot_prompt'
  vim.bo[buf].omnifunc = "v:lua.require'bravebot.prompt'.omnifunc"
  -- The menu offers files; nothing is inserted until the person picks one.
  pcall(function() vim.bo[buf].completeopt = 'menuone,noinsert,noselect' end)
  local km = keymaps()
  local function send()
    if M.send(buf, root) and after_send then
      after_send()
    end
  end
  local opts = { buffer = buf, desc = 'bravebot: send the prompt' }
  if km.send then
    vim.keymap.set({ 'n', 'i' }, km.send, send, opts)
  end
  if km.send_normal then
    vim.keymap.set('n', km.send_normal, send, opts)
  end
  for name, dir in pairs({ history_prev = -1, history_next = 1 }) do
    local lhs = km[name]
    if lhs then
      vim.keymap.set('n', lhs, function() M.recall(buf, root, dir) end,
        { buffer = buf, desc = 'bravebot: ' .. (dir < 0 and 'older' or 'newer') .. ' prompt' })
      vim.keymap.set('i', lhs, function()
        if vim.fn.pumvisible() == 1 then
          return vim.keycode(lhs)
        end
        vim.schedule(function() M.recall(buf, root, dir) end)
        return ''
      end, { buffer = buf, expr = true, desc = 'bravebot: ' .. (dir < 0 and 'older' or 'newer') .. ' prompt' })
    end
  end
  vim.keymap.set('i', '@', function()
    vim.schedule(function()
      -- Only while still typing there: in Normal mode <C-x><C-o> would count down and jump.
      if vim.fn.pumvisible() == 0 and vim.api.nvim_get_current_buf() == buf and vim.fn.mode() == 'i' then
        vim.api.nvim_feedkeys(vim.keycode('<C-x><C-o>'), 'n', false)
      end
    end)
    return '@'
  end, { buffer = buf, expr = true })
end

--- The prompt area's buffer of a root (made when missing).
function M.buf(root)
  local buf = M.bufs[root]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, 'bravebot://prompt/' .. root)
  vim.bo[buf].bufhidden = 'hide'
  M.setup_buffer(buf, root)
  M.bufs[root] = buf
  return buf
end

--- Show the root's prompt area under `chat_win`, unless this tab shows it already.
---@return integer win
function M.open_under(root, chat_win)
  local buf = M.buf(root)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
  local win = vim.api.nvim_open_win(buf, false, { split = 'below', win = chat_win, height = 3 })
  vim.wo[win].winfixheight = true
  vim.wo[win].wrap = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  -- The keys, from the left, cut at the right edge rather than the left when the window is narrow.
  vim.wo[win].winbar = '%#BravebotPrompt#prompt:%* ' .. M.hint(true):gsub('%%', '%%%%') .. '%<'
  return win
end

--- The :Bravebot ask float: the same keys; closing it unsent keeps what was typed for the next
--- :Bravebot ask.
function M.float(root)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  local width = math.min(80, vim.o.columns - 4)
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = 5,
    row = math.floor((vim.o.lines - 5) / 3),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' bravebot: ask (' .. M.hint() .. ') ',
  })
  local sent = false
  local function close()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  M.setup_buffer(buf, root, function()
    sent = true
    vim.cmd('stopinsert')
    close()
  end)
  if M.drafts[root] then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.drafts[root])
    M.drafts[root] = nil
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      if not sent and vim.trim(table.concat(lines, '\n')) ~= '' then
        M.drafts[root] = lines
      end
    end,
  })
  vim.keymap.set('n', '<Esc>', close, { buffer = buf, desc = 'bravebot: close, keeping the text' })
  vim.keymap.set('n', 'q', close, { buffer = buf, desc = 'bravebot: close, keeping the text' })
  vim.cmd('startinsert!')
  return buf, win
end

return M
