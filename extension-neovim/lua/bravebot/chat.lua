-- The chat buffer: streamed agent text, tool calls and results, plans, and quarantined notices
-- and remarks drawn inside a "│ " margin with their own highlight, so text nobody vouched for
-- never looks like the agent's words.
local M = {}

M.ns = vim.api.nvim_create_namespace('bravebot_chat')
M.MARGIN = '│ '

vim.api.nvim_set_hl(0, 'BravebotUntrusted', { default = true, link = 'DiagnosticWarn' })
vim.api.nvim_set_hl(0, 'BravebotTool', { default = true, link = 'Comment' })
vim.api.nvim_set_hl(0, 'BravebotPrompt', { default = true, link = 'Title' })

---@type table<string, {buf: integer, last: string?}> by root
M.chats = {}

local function chat_of(state)
  local c = M.chats[state.root]
  if c and vim.api.nvim_buf_is_valid(c.buf) then
    return c
  end
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, 'bravebot://chat/' .. state.root)
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].modifiable = false
  c = { buf = buf, last = nil }
  M.chats[state.root] = c
  return c
end

--- The chat buffer of a workspace (created when missing).
function M.buf(state)
  return chat_of(state).buf
end

--- Show the chat buffer in a split unless it is visible already.
function M.open(state, opts)
  opts = opts or {}
  local c = chat_of(state)
  local win = vim.fn.bufwinid(c.buf)
  if win == -1 then
    local cur = vim.api.nvim_get_current_win()
    local split = require('bravebot.config').options.chat_split == 'horizontal' and 'split' or 'vsplit'
    vim.cmd(split)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, c.buf)
    vim.wo[win].foldmethod = 'indent'
    vim.wo[win].foldenable = false
    vim.wo[win].wrap = true
    if opts.focus == false then
      vim.api.nvim_set_current_win(cur)
    end
  elseif opts.focus ~= false then
    vim.api.nvim_set_current_win(win)
  end
  return c.buf
end

local function set_lines(buf, first, last, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
end

local function is_empty(buf)
  return vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
end

--- Append whole lines, each with an optional highlight group over the whole line.
local function append(c, lines, hl)
  local buf = c.buf
  local start = is_empty(buf) and 0 or vim.api.nvim_buf_line_count(buf)
  set_lines(buf, is_empty(buf) and 0 or -1, -1, lines)
  if hl then
    for i = 0, #lines - 1 do
      vim.api.nvim_buf_set_extmark(buf, M.ns, start + i, 0, { line_hl_group = hl, end_col = #lines[i + 1] })
    end
  end
  M.follow(buf)
end

--- Untrusted text: every line inside the margin, with the untrusted highlight.
local function append_untrusted(c, header, text)
  local lines = { M.MARGIN .. header }
  for _, l in ipairs(vim.split(text or '', '\n', { plain = true })) do
    if l ~= '' or #lines == 1 then
      table.insert(lines, M.MARGIN .. l)
    end
  end
  if text == nil or text == '' then
    lines = { M.MARGIN .. header }
  end
  append(c, lines, 'BravebotUntrusted')
end

function M.follow(buf)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 and vim.api.nvim_get_current_win() ~= win then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

local function append_text(c, delta)
  local buf = c.buf
  local parts = vim.split(delta, '\n', { plain = true })
  if c.last ~= 'agentText' then
    append(c, { '' }, nil)
  end
  local n = vim.api.nvim_buf_line_count(buf)
  local last = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
  parts[1] = last .. parts[1]
  set_lines(buf, n - 1, n, parts)
  M.follow(buf)
end

function M.prompt(state, text, files)
  local c = chat_of(state)
  local lines = {}
  for i, l in ipairs(vim.split(text, '\n', { plain = true })) do
    lines[i] = (i == 1 and '> ' or '  ') .. l
  end
  if files and #files > 0 then
    table.insert(lines, '  files: ' .. table.concat(files, ', '))
  end
  append(c, lines, 'BravebotPrompt')
  c.last = 'prompt'
end

function M.note(state, text)
  local c = chat_of(state)
  append(c, { '-- ' .. text }, 'BravebotTool')
  c.last = 'note'
end

local function one_line(s)
  return (tostring(s or ''):gsub('[\r\n]+', ' '))
end

--- Draw one session/update.
function M.on_update(state, update)
  local c = chat_of(state)
  local kind = update.kind
  if kind == 'agentText' then
    append_text(c, update.delta or '')
  elseif kind == 'toolCall' then
    local routing = type(update.routing) == 'table' and update.routing.kind or update.routing
    local line = '▸ ' .. one_line(update.tool) .. ': ' .. one_line(update.why)
    if routing and routing ~= vim.NIL and routing ~= '' then
      line = line .. ' [' .. one_line(routing) .. ']'
    end
    append(c, { line }, 'BravebotTool')
  elseif kind == 'toolResult' then
    local lines = {}
    for i, l in ipairs(vim.split(update.summary or '', '\n', { plain = true })) do
      lines[i] = (i == 1 and ('  ↳ ' .. one_line(update.status) .. ': ') or '    ') .. l
    end
    append(c, lines, 'BravebotTool')
  elseif kind == 'quarantined' then
    append_untrusted(c, string.format('quarantined %s from %s: %s lines, %s bytes, %s', one_line(update.ref),
      one_line(update.origin), tostring(update.lines), tostring(update.bytes), one_line(update.label)), nil)
  elseif kind == 'remark' then
    append_untrusted(c, 'remark (from a processor, unverified):', update.text)
  elseif kind == 'check' then
    local s = 'check ' .. one_line(update.state)
    if update.lines then
      s = s .. ' (' .. update.lines .. ' lines)'
    end
    if update.completed ~= nil then
      s = s .. (update.completed and ', completed' or ', not completed')
    end
    append(c, { '  · ' .. s }, 'BravebotTool')
  elseif kind == 'plan' then
    local lines = { 'Plan:' }
    for _, t in ipairs(update.todos or {}) do
      local mark = (t.status == 'completed' and 'x') or (t.status == 'in_progress' and '~') or ' '
      table.insert(lines, string.format('- [%s] %s', mark, one_line(t.content)))
    end
    append(c, lines, nil)
  elseif kind == 'turnEnded' then
    append(c, { '-- turn ended: ' .. one_line(update.stopReason) }, 'BravebotTool')
  else
    append_untrusted(c, 'update ' .. one_line(kind) .. ':', vim.inspect(update))
  end
  c.last = kind
end

return M
