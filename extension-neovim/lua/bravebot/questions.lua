-- One handler per question kind of CONTRACT §3. Each gets (params, reply): `reply(option,
-- extra)` selects an offered option, `reply(nil)` refuses. Closing a window or <Esc> refuses.
local M = {}

local chat = require('bravebot.chat')

vim.api.nvim_set_hl(0, 'BravebotDelete', { default = true, link = 'DiffDelete' })
vim.api.nvim_set_hl(0, 'BravebotAdd', { default = true, link = 'DiffAdd' })
vim.api.nvim_set_hl(0, 'BravebotHunkAccepted', { default = true, link = 'DiagnosticOk' })
vim.api.nvim_set_hl(0, 'BravebotHunkRejected', { default = true, link = 'DiagnosticError' })

M.ns = vim.api.nvim_create_namespace('bravebot_proposal')

local function option(params, kind)
  for _, o in ipairs(params.options or {}) do
    if o.kind == kind then
      return o
    end
  end
end
M.option = option

local function approving(params)
  return option(params, 'allow_once') or option(params, 'allow_always')
end

local function rejecting(params)
  return option(params, 'reject_once') or option(params, 'reject_always')
end

local function split(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

-- Questions waiting for the person ------------------------------------------------------------
-- A question never takes focus by itself: it is announced (a notification and a line in the chat)
-- and drawn where the person can see it, and focus moves to it only on :Bravebot answer or the
-- answer mapping. Inside a question, approving takes a number and then <CR>; no single letter
-- approves anything.

---@class bravebot.Pending
---@field session_id? string
---@field kind string
---@field title string
---@field focus fun() move the cursor to the question
---@field refuse fun() answer it with a refusal and take it off the screen

---@type bravebot.Pending[] oldest first
M.pending = {}

local function forget(entry)
  for i, e in ipairs(M.pending) do
    if e == entry then
      table.remove(M.pending, i)
      require('bravebot.attention').changed()
      return
    end
  end
end

--- The waiting question with this id, if any.
function M.find(question_id)
  for _, e in ipairs(M.pending) do
    if question_id ~= nil and e.question_id == question_id then
      return e
    end
  end
end

--- The server stopped waiting for a question (ATTN-4): take it off the screen. Its refusal
--- reaches a server that ignores it.
function M.close_question(question_id)
  local entry = M.find(question_id)
  if entry then
    entry.refuse()
  end
end

--- A key as it is typed: <Leader> and <LocalLeader> replaced by the keys they stand for.
function M.key_text(lhs)
  if type(lhs) ~= 'string' then
    return tostring(lhs)
  end
  local leader = vim.g.mapleader or '\\'
  local localleader = vim.g.maplocalleader or '\\'
  local function shown(k)
    return k == ' ' and '<Space>' or k
  end
  return (lhs:gsub('<[Ll]ocal[Ll]eader>', function() return shown(localleader) end)
    :gsub('<[Ll]eader>', function() return shown(leader) end))
end

--- What each kind of question asks, in words; a kind this plugin does not know is named as sent.
M.KIND_WORDS = {
  run = 'run a command',
  edit = 'edit a file',
  write = 'write a file',
  fetch = 'fetch from the network',
  lspStart = 'start a language server',
  readOutput = "read a program's output",
  vetContent = 'read content nobody vouched for',
  trustRead = 'read a file',
  delegate = 'start a delegate',
  askUser = 'the agent asks you',
  mcpTools = "offer an MCP server's tools",
  restore = 'restore over your changes',
}

--- What a question of `kind` asks, in words (its float's title); an unknown kind as sent.
function M.kind_words(kind)
  return M.KIND_WORDS[kind] or tostring(kind)
end

--- `text` cut to `width` display cells, an ellipsis marking the cut.
local function fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local n = vim.fn.strchars(text)
  while n > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, n)) > width - 1 do
    n = n - 1
  end
  return vim.fn.strcharpart(text, 0, n) .. '…'
end
M.fit = fit

--- Put `entry` on the waiting list and tell the person, without moving the cursor: in the chat in
--- full, and in one message short enough for the command line, so no "Press ENTER" interrupts.
function M.announce(entry, ctx_session)
  entry.session_id = entry.session_id or ctx_session
  table.insert(M.pending, entry)
  local km = require('bravebot.config').options.keymaps or {}
  local how = ':Bravebot answer'
  if km.answer then
    how = how .. ' or ' .. M.key_text(km.answer)
  end
  local what = M.kind_words(entry.kind)
  -- Who asks, when a delegate does: from the question's `asker` only (NVIM-70).
  local by = entry.asker and (', asked by ' .. entry.asker) or ''
  local title = (entry.title:gsub('[\r\n]+', ' '))
  local client = require('bravebot.client')
  local state = entry.session_id and client.by_session[entry.session_id]
  if state then
    chat.note_to(state, entry.session_id, string.format('a question waits (%s%s): %s (%s)', what, by, title, how))
  end
  local head = string.format('bravebot asks (%s%s): ', what, by)
  local tail = ' (' .. how .. ')'
  local room = math.max(20, (vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12) - 1)
  local text = fit(head .. title, math.max(10, room - vim.fn.strdisplaywidth(tail))) .. tail
  local attention = require('bravebot.attention')
  attention.changed()
  if attention.questions_on() then
    vim.notify(fit(text, room), vim.log.levels.WARN)
  end
end

--- :Bravebot answer: move the cursor to the oldest waiting question.
function M.answer()
  local entry = M.pending[1]
  if not entry then
    vim.notify('bravebot: no question is waiting')
    return false
  end
  entry.focus()
  return true
end

--- Refuse and take down every waiting question of a session (its turn ended or was replaced).
function M.close_session(session_id)
  for _, entry in ipairs(vim.list_slice(M.pending, 1, #M.pending)) do
    if entry.session_id == session_id then
      entry.refuse()
    end
  end
end

-- Floating windows ------------------------------------------------------------------------------

local function approves(o)
  return o and (o.kind == 'allow_once' or o.kind == 'allow_always')
end

--- A question's float: `lines` (with `hls`: {line, group} pairs), then the numbered `choices`
--- ({label, fn, approving}), one of them marked. A number marks its choice and <CR> confirms the
--- marked one; the mark starts on `opts.default` or on the first choice that does not approve, so
--- <CR> alone never approves. <Esc>, q and closing the window any other way call `on_close`.
--- The float opens without focus unless `opts.focus`; :Bravebot answer focuses it.
function M.float(title, lines, hls, choices, on_close, opts)
  opts = opts or {}
  local selected = opts.default
  if not selected then
    for i, ch in ipairs(choices) do
      if not ch.approving then
        selected = i
        break
      end
    end
  end
  local body = #lines
  table.insert(lines, '')
  for i, ch in ipairs(choices) do
    table.insert(lines, string.format('%s %d  %s', i == selected and '▶' or ' ', i, ch.label))
  end
  table.insert(lines, '')
  local first_choice = body + 1
  table.insert(lines, string.format('1-%d mark a choice, <CR> confirms the marked one, <Esc>/q refuses', #choices))
  for _, k in ipairs(opts.keys or {}) do
    table.insert(lines, string.format('%s %s', k.lhs, k.desc))
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'bravebot_question'
  for _, h in ipairs(hls or {}) do
    vim.api.nvim_buf_set_extmark(buf, M.ns, h[1], 0, { line_hl_group = h[2] })
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 4))
  -- Rows as drawn: a line wider than the float wraps, and every row counts, so the last choice
  -- and the key hint are not left below the float's edge.
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.min(rows, math.max(3, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, opts.focus == true, {
    relative = 'editor',
    anchor = 'NE',
    width = width,
    height = height,
    row = 1,
    col = vim.o.columns,
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title:gsub('[\r\n]', ' ') .. ' ',
    footer = ' :Bravebot answer ',
    footer_pos = 'right',
  })
  local function mark(i)
    if not choices[i] then
      return
    end
    selected = i
    vim.bo[buf].modifiable = true
    for j, ch in ipairs(choices) do
      vim.api.nvim_buf_set_lines(buf, first_choice + j - 1, first_choice + j, false,
        { string.format('%s %d  %s', j == i and '▶' or ' ', j, ch.label) })
    end
    vim.bo[buf].modifiable = false
    pcall(vim.api.nvim_win_set_cursor, win, { first_choice + i, 0 })
  end
  local decided = false
  local entry
  local function finish(fn)
    if decided then
      return
    end
    decided = true
    forget(entry)
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    fn()
  end
  for i = 1, math.min(#choices, 9) do
    vim.keymap.set('n', tostring(i), function() mark(i) end,
      { buffer = buf, nowait = true, desc = 'bravebot: mark ' .. choices[i].label })
  end
  vim.keymap.set('n', '<CR>', function()
    local ch = choices[selected]
    if ch then
      finish(ch.fn)
    end
  end, { buffer = buf, nowait = true, desc = 'bravebot: confirm the marked choice' })
  for _, lhs in ipairs({ '<Esc>', 'q' }) do
    vim.keymap.set('n', lhs, function()
      finish(on_close)
    end, { buffer = buf, nowait = true, desc = 'bravebot: refuse' })
  end
  -- Keys of the question's own that answer nothing (the Open key of a picture's copy).
  for _, k in ipairs(opts.keys or {}) do
    vim.keymap.set('n', k.lhs, k.fn, { buffer = buf, nowait = true, desc = 'bravebot: ' .. k.desc })
  end
  vim.api.nvim_create_autocmd({ 'WinClosed', 'BufWipeout' }, {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        finish(on_close)
      end)
    end,
  })
  entry = {
    kind = opts.kind or 'question',
    title = opts.title or title,
    asker = opts.asker,
    session_id = opts.session_id,
    question_id = opts.question_id,
    focus = function()
      if vim.api.nvim_win_is_valid(win) then
        vim.cmd('stopinsert')
        vim.api.nvim_set_current_win(win)
        pcall(vim.api.nvim_win_set_cursor, win, { first_choice + (selected or 1), 0 })
      end
    end,
    refuse = function()
      finish(on_close)
    end,
  }
  M.announce(entry)
  return win, buf
end

--- Which delegate asks, as `delegate N (kind)`, read from `asker` alone (DELEG-70): the server
--- sets it from the delegate's seat, while `why` is the planner's words and may begin with any
--- name. nil for the turn's own question.
function M.asked_by(params)
  local a = type(params) == 'table' and params.asker or nil
  if type(a) ~= 'table' or type(a.number) ~= 'number' or type(a.kind) ~= 'string' then
    return nil
  end
  return string.format('delegate %d (%s)', a.number, (a.kind:gsub('[\r\n]+', ' ')))
end

local function header(params)
  local lines = { params.title or params.kind }
  local asker = M.asked_by(params)
  if asker then
    table.insert(lines, 'asked by ' .. asker)
  end
  if params.why and params.why ~= '' then
    for _, l in ipairs(split('why: ' .. params.why)) do
      table.insert(lines, l)
    end
  end
  return lines
end

--- The offered options as float choices, each answering with itself.
local function choices_of(params, reply)
  local out = {}
  for _, o in ipairs(params.options or {}) do
    table.insert(out, { label = o.name or o.optionId, approving = approves(o), fn = function() reply(o) end })
  end
  return out
end

local function float_opts(params, extra)
  return vim.tbl_extend('force', { kind = params.kind, session_id = params.sessionId, title = params.title,
    asker = M.asked_by(params), question_id = params.questionId }, extra or {})
end

-- run -------------------------------------------------------------------------------------------

--- Buffers under `root` with changes not written to disk: what a command would not see.
function M.unsaved(root)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and vim.bo[b].modified then
      local name = vim.fs.normalize(vim.api.nvim_buf_get_name(b))
      if name ~= '' and (root == nil or vim.startswith(name, root .. '/')) then
        table.insert(out, root and name:sub(#root + 2) or name)
      end
    end
  end
  table.sort(out)
  return out
end

function M.run(params, reply)
  local s = params.subject or {}
  local lines = header(params)
  table.insert(lines, '')
  if s.command then
    table.insert(lines, '$ ' .. s.command:gsub('\n', ' '))
  end
  local plan = s.plan
  if type(plan) == 'string' then
    plan = split(plan)
  end
  for _, l in ipairs(type(plan) == 'table' and plan or {}) do
    table.insert(lines, '  ' .. (type(l) == 'string' and l or vim.inspect(l)))
  end
  if s.notice and s.notice ~= '' then
    table.insert(lines, '')
    for _, l in ipairs(split('notice: ' .. s.notice)) do
      table.insert(lines, l)
    end
  end
  local state = params.sessionId and require('bravebot.client').by_session[params.sessionId]
  local unsaved = M.unsaved(state and state.root or vim.fs.normalize(vim.fn.getcwd()))
  if #unsaved > 0 then
    table.insert(lines, '')
    table.insert(lines, 'unsaved in the editor, so the command reads what is on disk instead:')
    for _, f in ipairs(unsaved) do
      table.insert(lines, '  ' .. f)
    end
  end
  return M.float('bravebot: ' .. M.kind_words('run'), lines, {}, choices_of(params, reply), function() reply(nil) end, float_opts(params))
end

-- vetContent / readOutput / trustRead: untrusted bytes inside a margin ----------------------------

--- Opens a picture's or PDF's private copy with the system's opener; says so when it cannot.
function M.open_copy(path)
  local ok, opened, err = pcall(vim.ui.open, path)
  if not ok or not opened then
    vim.notify('bravebot: could not open ' .. path .. ': ' .. tostring(ok and err or opened), vim.log.levels.WARN)
  end
end

function M.content(params, reply)
  local s = params.subject or {}
  local lines = header(params)
  local hls = {}
  if s.verdict then
    table.insert(lines, 'verdict: ' .. tostring(s.verdict))
  end
  if s.verdictText and s.verdictText ~= '' then
    for _, l in ipairs(split(s.verdictText)) do
      table.insert(lines, chat.MARGIN .. l)
      table.insert(hls, { #lines - 1, 'BravebotUntrusted' })
    end
  end
  if s.origin then
    table.insert(lines, 'from: ' .. tostring(s.origin))
  end
  if s.path then
    table.insert(lines, 'path: ' .. s.path)
  end
  -- A picture or a PDF is not drawn here: its private copy is named, with its type and size,
  -- and o opens it in the system's viewer (NVIM-104).
  local copy = type(s.copy) == 'table' and type(s.copy.path) == 'string' and s.copy or nil
  if copy then
    table.insert(lines, 'copy: ' .. copy.path:gsub('[\r\n]', ' '))
    table.insert(lines, string.format('type: %s, %s bytes', tostring(copy.mediaType), tostring(copy.bytes)))
  end
  if s.notice and s.notice ~= '' then
    for _, l in ipairs(split('notice: ' .. s.notice)) do
      table.insert(lines, l)
    end
  end
  if s.content then
    table.insert(lines, '')
    for _, l in ipairs(split(s.content)) do
      table.insert(lines, chat.MARGIN .. l)
      table.insert(hls, { #lines - 1, 'BravebotUntrusted' })
    end
  end
  local keys = copy and { {
    lhs = 'o',
    desc = 'opens the copy in your system\'s viewer (answers nothing)',
    fn = function() M.open_copy(copy.path) end,
  } } or nil
  return M.float('bravebot: ' .. M.kind_words(params.kind), lines, hls, choices_of(params, reply), function() reply(nil) end,
    float_opts(params, { keys = keys }))
end

-- fetch, lspStart, and kinds this plugin does not know ------------------------------------

function M.select(params, reply)
  local s = params.subject or {}
  local lines = header(params)
  for _, f in ipairs({ 'host', 'url', 'path', 'command' }) do
    if s[f] then
      table.insert(lines, f .. ': ' .. tostring(s[f]):gsub('[\r\n]+', ' '))
    end
  end
  if s.notice and s.notice ~= '' then
    for _, l in ipairs(split('notice: ' .. s.notice)) do
      table.insert(lines, l)
    end
  end
  return M.float('bravebot: ' .. M.kind_words(params.kind), lines, {}, choices_of(params, reply),
    function() reply(nil) end, float_opts(params))
end

-- delegate: what the delegate will be told, then what it may use ---------------------------------

--- A delegate's start question shows the task it will be told (the entry of `each` last), so the
--- person knows which delegate they start. A run whose context met unvouched content cannot
--- delegate (DELEG-5), so this text is the planner's own.
function M.delegate(params, reply)
  local s = params.subject or {}
  local lines = header(params)
  if s.content and s.content ~= '' then
    table.insert(lines, 'it will be told:')
    for _, l in ipairs(split(s.content)) do
      table.insert(lines, '  ' .. l)
    end
  end
  if s.notice and s.notice ~= '' then
    for _, l in ipairs(split('notice: ' .. s.notice)) do
      table.insert(lines, l)
    end
  end
  return M.float('bravebot: ' .. M.kind_words('delegate'), lines, {}, choices_of(params, reply), function() reply(nil) end,
    float_opts(params))
end

-- askUser: the header, the question, its options, "in my own words" and Skip ----------------------

function M.ask_user(params, reply)
  local s = params.subject or {}
  local lines = {}
  if s.header and s.header ~= '' then
    table.insert(lines, s.header)
  elseif params.title then
    table.insert(lines, params.title)
  end
  for _, l in ipairs(split(s.question or '')) do
    table.insert(lines, l)
  end
  if params.why and params.why ~= '' then
    table.insert(lines, 'why: ' .. params.why:gsub('[\r\n]+', ' '))
  end
  local choices = {}
  local skip
  for i, o in ipairs(params.options or {}) do
    local ch = { label = o.name or o.optionId, approving = false }
    if o.optionId == 'own' then
      ch.fn = function()
        vim.ui.input({ prompt = (s.question or 'Your answer') .. ' ' }, function(text)
          if text == nil or vim.trim(text) == '' then
            reply(nil)
          else
            reply(o, { text = text })
          end
        end)
      end
    else
      ch.fn = function() reply(o) end
    end
    if o.kind == 'reject_once' or o.kind == 'reject_always' then
      skip = i
    end
    table.insert(choices, ch)
  end
  return M.float('bravebot: the agent asks', lines, {}, choices, function() reply(nil) end,
    float_opts(params, { default = skip }))
end

-- edit / write: the proposal inline -----------------------------------------------------------------

---@type table<integer, table> pending proposals by buffer
M.proposals = {}

--- A new file's proposal: its own scratch buffer holds the proposed text, every line an added one.
local function draw_new(p)
  local buf = p.buf
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local verdict = p.verdicts[1]
  local mark = verdict == true and ', accepted' or verdict == false and ', rejected' or ''
  for l = 0, vim.api.nvim_buf_line_count(buf) - 1 do
    vim.api.nvim_buf_set_extmark(buf, M.ns, l, 0, { line_hl_group = 'BravebotAdd', priority = 200 })
  end
  vim.api.nvim_buf_set_extmark(buf, M.ns, 0, 0, {
    virt_lines = { { { string.format('bravebot: new file %s, proposed (hunk 1/1%s); %s', p.subject.path or '?', mark, p.keys), 'Comment' } } },
    virt_lines_above = true,
  })
end

--- The lines hunk `h` puts in: its own `text` (WRITE-61), else its lines of the whole proposal
--- (a server that sends `proposed` and no hunk texts).
local function added_lines(p, h)
  if type(h.text) == 'string' then
    return split(h.text)
  end
  p.proposed_lines = p.proposed_lines or split(p.subject.proposed)
  return vim.list_slice(p.proposed_lines, h.newStart + 1, h.newStart + h.newLines)
end

--- The whole proposal: the subject's `proposed`, else asked of the server while the question
--- waits (WRITE-61). nil, the person told why, when the server cannot give it.
local function proposed_text(params)
  local s = params.subject or {}
  if type(s.proposed) == 'string' then
    return s.proposed
  end
  local texts, err = require('bravebot.client').question_texts(params.sessionId, params.questionId)
  if not texts or type(texts.proposed) ~= 'string' then
    vim.notify(string.format('bravebot: cannot show the proposal for %s: the server did not give its text (%s)',
      s.path or '?', err or 'no proposed text in its answer'), vim.log.levels.ERROR)
    return nil
  end
  return texts.proposed
end

local function draw(p)
  if p.new_file then
    return draw_new(p)
  end
  local buf = p.buf
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local count = vim.api.nvim_buf_line_count(buf)
  for i, h in ipairs(p.hunks) do
    local verdict = p.verdicts[i]
    local mark = verdict == true and ' accepted' or verdict == false and ' rejected' or ''
    local tag_hl = verdict == true and 'BravebotHunkAccepted' or verdict == false and 'BravebotHunkRejected' or 'Comment'
    for l = h.oldStart, h.oldStart + h.oldLines - 1 do
      if l < count then
        vim.api.nvim_buf_set_extmark(buf, M.ns, l, 0, { line_hl_group = 'BravebotDelete', priority = 200 })
      end
    end
    local virt = {}
    for _, l in ipairs(added_lines(p, h)) do
      table.insert(virt, { { '+ ' .. l, 'BravebotAdd' } })
    end
    local anchor, above = h.oldStart + h.oldLines - 1, false
    if h.oldLines == 0 then
      anchor, above = h.oldStart, true
    end
    if anchor >= count then
      anchor, above = count - 1, false
    end
    anchor = math.max(anchor, 0)
    vim.api.nvim_buf_set_extmark(buf, M.ns, math.min(h.oldStart, count - 1), 0, {
      virt_text = { { string.format('bravebot hunk %d/%d%s', i, #p.hunks, mark), tag_hl } },
      virt_text_pos = 'eol',
    })
    if #virt > 0 then
      vim.api.nvim_buf_set_extmark(buf, M.ns, anchor, 0, { virt_lines = virt, virt_lines_above = above })
    end
  end
end

local function hunk_at(p, line0)
  for i, h in ipairs(p.hunks) do
    local last = h.oldStart + math.max(h.oldLines, 1) - 1
    if line0 >= h.oldStart and line0 <= last then
      return i
    end
  end
  -- The nearest hunk starting at or after the cursor, else the last one.
  for i, h in ipairs(p.hunks) do
    if h.oldStart >= line0 then
      return i
    end
  end
  return #p.hunks
end

local function finish(p, answer)
  if p.done then
    return
  end
  p.done = true
  local buf = p.buf
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    for _, lhs in ipairs(p.mapped) do
      pcall(vim.keymap.del, 'n', lhs, { buffer = buf })
    end
  end
  if p.diff_buf and vim.api.nvim_buf_is_valid(p.diff_buf) then
    vim.api.nvim_buf_delete(p.diff_buf, { force = true })
  end
  M.proposals[buf] = nil
  if p.new_file and vim.api.nvim_buf_is_valid(buf) then
    -- The windows that showed the proposal show again what they showed before (the prompt area
    -- or a file window is never closed with it); one opened for it closes.
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      local before = (p.shown_in or {})[win]
      if win ~= p.opened_win and before and vim.api.nvim_buf_is_valid(before) then
        vim.api.nvim_win_set_buf(win, before)
      elseif #vim.api.nvim_tabpage_list_wins(0) > 1 then
        pcall(vim.api.nvim_win_close, win, true)
      end
    end
    vim.api.nvim_buf_delete(buf, { force = true })
  end
  answer()
end

--- Record a verdict for hunk `i` (nil: every undecided hunk); answer once every hunk has one.
function M.decide(buf, i, verdict)
  local p = M.proposals[buf]
  if not p then
    return
  end
  if i then
    p.verdicts[i] = verdict
  else
    for j = 1, #p.hunks do
      if p.verdicts[j] == nil then
        p.verdicts[j] = verdict
      end
    end
  end
  for j = 1, #p.hunks do
    if p.verdicts[j] == nil then
      draw(p)
      return
    end
  end
  local accepted = {}
  for j = 1, #p.hunks do
    if p.verdicts[j] then
      table.insert(accepted, j - 1)
    end
  end
  finish(p, function()
    if #accepted == 0 then
      p.reply(rejecting(p.params))
    elseif #accepted == #p.hunks then
      p.reply(option(p.params, 'allow_once') or approving(p.params))
    else
      p.reply(option(p.params, 'allow_once') or approving(p.params), { acceptedHunks = accepted })
    end
  end)
end

--- After a call's result: a proposal of that call still drawn was answered elsewhere (a code
--- action), so it comes off the screen; an edit that landed in a buffer the person had no unsaved
--- changes in is written, as when it is accepted here.
function M.settle_call(session_id, call_id, status)
  for buf, p in pairs(M.proposals) do
    if call_id and p.call_id == call_id and p.params.sessionId == session_id then
      if status == 'ok' and not p.had_unsaved and not M.detached[buf] and not p.new_file then
        M.to_save[buf] = true
      end
      finish(p, function()
        p.reply(nil)
      end)
    end
  end
end

function M.cancel_proposal(buf)
  local p = M.proposals[buf]
  if p then
    finish(p, function()
      p.reply(nil)
    end)
  end
end

function M.jump(buf, dir)
  local p = M.proposals[buf]
  if not p then
    return
  end
  local line0 = vim.api.nvim_win_get_cursor(0)[1] - 1
  local target
  for i = 1, #p.hunks do
    local h = p.hunks[dir > 0 and i or (#p.hunks - i + 1)]
    if (dir > 0 and h.oldStart > line0) or (dir < 0 and h.oldStart < line0) then
      target = h.oldStart
      break
    end
  end
  if target then
    vim.api.nvim_win_set_cursor(0, { math.min(target + 1, vim.api.nvim_buf_line_count(buf)), 0 })
  end
end

--- The proposal side by side with the buffer, in :diffsplit.
function M.diff(buf)
  local p = M.proposals[buf]
  if not p then
    return
  end
  if p.diff_buf and vim.api.nvim_buf_is_valid(p.diff_buf) then
    return p.diff_buf
  end
  local proposed = proposed_text(p.params)
  if not proposed then
    return nil
  end
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  end
  local nbuf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(nbuf, 0, -1, false, split(proposed))
  pcall(vim.api.nvim_buf_set_name, nbuf, 'bravebot://proposal/' .. (p.subject.path or buf))
  vim.bo[nbuf].bufhidden = 'wipe'
  vim.bo[nbuf].modifiable = false
  vim.bo[nbuf].filetype = vim.bo[buf].filetype
  vim.cmd('diffthis')
  vim.cmd('vertical rightbelow sbuffer ' .. nbuf)
  vim.cmd('diffthis')
  p.diff_buf = nbuf
  -- The same keys on the proposal's side, the hunk found by the proposal's own lines.
  local km = require('bravebot.config').options.keymaps or {}
  local function at_cursor()
    local line0 = vim.api.nvim_win_get_cursor(0)[1] - 1
    for i, h in ipairs(p.hunks) do
      if line0 >= h.newStart and line0 <= h.newStart + math.max(h.newLines, 1) - 1 then
        return i
      end
    end
    for i, h in ipairs(p.hunks) do
      if h.newStart >= line0 then
        return i
      end
    end
    return #p.hunks
  end
  local keys = {
    accept_hunk = function() M.decide(buf, at_cursor(), true) end,
    reject_hunk = function() M.decide(buf, at_cursor(), false) end,
    accept_all = function() M.decide(buf, nil, true) end,
    reject_all = function() M.decide(buf, nil, false) end,
  }
  for name, fn in pairs(keys) do
    if km[name] then
      vim.keymap.set('n', km[name], fn, { buffer = nbuf, nowait = true, desc = 'bravebot: ' .. name:gsub('_', ' ') })
    end
  end
  vim.api.nvim_buf_set_extmark(nbuf, M.ns, 0, 0, {
    virt_lines = { { { string.format('bravebot: the proposal; %s accepts the hunk under the cursor, %s rejects it, %s / %s all',
      M.key_text(km.accept_hunk), M.key_text(km.reject_hunk), M.key_text(km.accept_all), M.key_text(km.reject_all)), 'Comment' } } },
    virt_lines_above = true,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = nbuf,
    once = true,
    callback = function()
      if vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('diffoff')
        end)
      end
    end,
  })
  return nbuf
end

---@type table<integer, true> buffers opened for a proposal, detached until it has landed
M.detached = {}

--- After a tool result: reload the buffers opened for a proposal (the server wrote the file on
--- disk) and attach them to the client like any other buffer.
function M.settle_detached()
  for buf in pairs(M.to_save) do
    if not M.proposals[buf] then
      M.to_save[buf] = nil
      if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('silent write')
        end)
      end
    end
  end
  for buf in pairs(M.detached) do
    if not M.proposals[buf] then
      M.detached[buf] = nil
      if vim.api.nvim_buf_is_valid(buf) then
        vim.b[buf].bravebot_detached = nil
        if not vim.bo[buf].modified then
          vim.api.nvim_buf_call(buf, function()
            vim.cmd('silent! edit')
          end)
        end
      end
    end
  end
  require('bravebot.client').attach_all()
end

--- The buffer of the file a proposal changes, loaded but not shown: the cursor stays where the
--- person is until they ask for the question.
local function target_buffer(subject)
  local path = subject.uri and vim.uri_to_fname(subject.uri) or subject.path
  local buf = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.b[buf].bravebot_detached = true
    M.detached[buf] = true
  end
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  return buf
end

--- Whether `win` shows a file a proposal may take the place of: not a float, not the chat, the
--- prompt area or another of the plugin's own buffers (all named `bravebot://` by the plugin).
local function file_window(win)
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
  return not vim.startswith(name, 'bravebot://')
end

--- The window a proposal is shown in: its own if it has one; else the current window, the
--- previous one or any other of the tab when it shows a file; else a new one above the chat.
local function proposal_window(buf)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    return win
  end
  local candidates = { vim.api.nvim_get_current_win(), vim.fn.win_getid(vim.fn.winnr('#')) }
  vim.list_extend(candidates, vim.api.nvim_tabpage_list_wins(0))
  for _, w in ipairs(candidates) do
    if w ~= 0 and vim.api.nvim_win_is_valid(w) and file_window(w) then
      return w
    end
  end
  local anchor = vim.api.nvim_get_current_win()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(w).relative == '' then
      anchor = w
      break
    end
  end
  return vim.api.nvim_open_win(buf, false, { split = 'above', win = anchor }), true
end

--- Show a proposal's buffer in a window that shows a file (never the chat or the prompt area) at
--- the first hunk still undecided; a new file's from its first line with the header above it in
--- view. The window's buffer before is kept, to be put back once the proposal is answered.
function M.focus_proposal(buf)
  local p = M.proposals[buf]
  if not p then
    return
  end
  vim.cmd('stopinsert')
  local win, opened = proposal_window(buf)
  if opened then
    p.opened_win = win
  elseif vim.api.nvim_win_get_buf(win) ~= buf then
    p.shown_in = p.shown_in or {}
    p.shown_in[win] = vim.api.nvim_win_get_buf(win)
    vim.api.nvim_win_set_buf(win, buf)
  end
  vim.api.nvim_set_current_win(win)
  for i, h in ipairs(p.hunks) do
    if p.verdicts[i] == nil then
      pcall(vim.api.nvim_win_set_cursor, 0, { math.min(h.oldStart + 1, vim.api.nvim_buf_line_count(buf)), 0 })
      break
    end
  end
  if p.new_file then
    -- The header is a virtual line above line 1: in view only with the window's top filled.
    vim.fn.winrestview({ topline = 1, topfill = 1 })
  end
end

---@type table<integer, true> buffers to write once an accepted edit has landed in them
M.to_save = {}

--- The path of a proposal's file when no such file exists yet and no buffer holds it.
local function new_file_path(subject)
  local path = subject.uri and vim.uri_to_fname(subject.uri) or subject.path
  if not path or vim.uv.fs_stat(path) then
    return nil
  end
  local b = vim.fn.bufnr(path)
  if b ~= -1 and vim.api.nvim_buf_is_loaded(b) then
    return nil
  end
  return path
end

--- A scratch buffer showing a new file's proposed text, with the file's filetype.
local function proposal_buffer(subject, path, proposed)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, split(proposed))
  pcall(vim.api.nvim_buf_set_name, buf, 'bravebot://proposal/' .. (subject.path or path) .. ' (new file)')
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].modifiable = false
  local ft = vim.filetype.match({ filename = path, buf = buf })
  if ft then
    vim.bo[buf].filetype = ft
  end
  return buf
end

function M.edit(params, reply)
  local s = params.subject or {}
  local hunks = s.hunks or {}
  if #hunks == 0 then
    -- Nothing to show inline (an identical write): a plain question.
    return M.select(params, reply)
  end
  local new_path = new_file_path(s)
  local proposed = new_path and proposed_text(params)
  if new_path and not proposed then
    -- Without the text there is nothing true to show: refused, never an empty file.
    return reply(nil)
  end
  local buf = new_path and proposal_buffer(s, new_path, proposed) or target_buffer(s)
  M.cancel_proposal(buf)
  local km = require('bravebot.config').options.keymaps or {}
  local client = require('bravebot.client')
  local state = params.sessionId and client.by_session[params.sessionId]
  local p = { buf = buf, params = params, subject = s, hunks = hunks, verdicts = {}, mapped = {},
    new_file = new_path ~= nil,
    call_id = state and chat.current_call(state, params.sessionId) or nil,
    keys = string.format('%s accepts, %s rejects', M.key_text(km.accept_hunk), M.key_text(km.reject_hunk)),
    -- Whether the person had changes of their own not yet written: if not, an accepted edit is
    -- written for them, so the disk (what `run` reads) matches the buffer.
    had_unsaved = vim.bo[buf].modified }
  local entry
  p.reply = function(option, extra)
    forget(entry)
    if option and approves(option) and not p.had_unsaved and not M.detached[buf] and not p.new_file then
      M.to_save[buf] = true
    end
    reply(option, extra)
  end
  M.proposals[buf] = p
  local function map(name, fn, desc)
    local lhs = km[name]
    if lhs then
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'bravebot: ' .. desc })
      table.insert(p.mapped, lhs)
    end
  end
  local function cursor_hunk()
    return hunk_at(p, vim.api.nvim_win_get_cursor(0)[1] - 1)
  end
  map('accept_hunk', function() M.decide(buf, cursor_hunk(), true) end, 'accept this hunk')
  map('reject_hunk', function() M.decide(buf, cursor_hunk(), false) end, 'reject this hunk')
  map('accept_all', function() M.decide(buf, nil, true) end, 'accept every hunk')
  map('reject_all', function() M.decide(buf, nil, false) end, 'reject every hunk')
  map('next_hunk', function() M.jump(buf, 1) end, 'next hunk')
  map('prev_hunk', function() M.jump(buf, -1) end, 'previous hunk')
  if not p.new_file then
    map('diff', function() M.diff(buf) end, 'show the proposal in a diff')
  end
  vim.api.nvim_create_autocmd({ 'BufUnload', 'BufDelete' }, {
    buffer = buf,
    once = true,
    callback = function()
      M.cancel_proposal(buf)
    end,
  })
  draw(p)
  entry = {
    kind = params.kind,
    title = string.format('%s, %d hunk(s); %s accepts a hunk, %s rejects it, %s / %s all',
      params.title or (params.kind .. ' ' .. (s.path or '?')), #hunks, M.key_text(km.accept_hunk),
      M.key_text(km.reject_hunk), M.key_text(km.accept_all), M.key_text(km.reject_all)),
    asker = M.asked_by(params),
    session_id = params.sessionId,
    question_id = params.questionId,
    focus = function() M.focus_proposal(buf) end,
    refuse = function() M.cancel_proposal(buf) end,
  }
  M.announce(entry)
end

-- restore: a file the person changed after the agent did, in its three versions ---------------

--- A restore that would overwrite the person's own changes: the path, then the three versions
--- (what the restore writes, what the agent's turn left, the file now with the person's
--- changes) and the diff from now to what the restore writes, each under a heading, its lines
--- indented so that no line of a file reads as one of the float's own.
function M.restore(params, reply)
  local s = params.subject or {}
  local lines = header(params)
  local hls = {}
  if s.path then
    table.insert(lines, 'path: ' .. tostring(s.path):gsub('[\r\n]+', ' '))
  end
  table.insert(lines, 'You changed this file after the agent did. Restoring it replaces your changes.')
  local function section(title, text, absent, diff)
    table.insert(lines, '')
    table.insert(lines, title)
    table.insert(hls, { #lines - 1, 'BravebotPrompt' })
    if text == nil or text == vim.NIL then
      table.insert(lines, '  ' .. absent)
      return
    end
    local body = split(tostring(text))
    if #body == 0 then
      table.insert(lines, '  (empty)')
    end
    for _, l in ipairs(body) do
      table.insert(lines, '  ' .. l)
      if diff and l:match('^%+') and not l:match('^%+%+%+ ') then
        table.insert(hls, { #lines - 1, 'BravebotAdd' })
      elseif diff and l:match('^%-') and not l:match('^%-%-%- ') then
        table.insert(hls, { #lines - 1, 'BravebotDelete' })
      end
    end
  end
  section('── what the restore writes:', s.proposed, '(nothing: the restore deletes the file)')
  section("── what the agent's turn left:", s.agent, '(no file)')
  section('── the file now, with your changes:', s.original, '(no file)')
  section('── the restore as a diff from now:', s.diff, '(no diff given)', true)
  return M.float('bravebot: ' .. M.kind_words('restore'), lines, hls, choices_of(params, reply), function() reply(nil) end,
    float_opts(params))
end

-- Unknown kinds still get an answer a person chose.
M.unknown = M.select

--- Every question kind of CONTRACT §3, and its handler.
M.kinds = {
  write = M.edit,
  edit = M.edit,
  run = M.run,
  fetch = M.select,
  lspStart = M.select,
  readOutput = M.content,
  vetContent = M.content,
  trustRead = M.content,
  delegate = M.delegate,
  askUser = M.ask_user,
  -- An MCP server's tools: names, schemas and descriptions, all the server's words (MCP-9).
  mcpTools = M.content,
  -- A restore over the person's changes: the three versions, "restore" or "keep".
  restore = M.restore,
  _unknown = M.unknown,
}

return M
