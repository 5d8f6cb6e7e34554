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

-- Floating windows ------------------------------------------------------------------------------

--- A float showing `lines` (with `hls`: {line, group} pairs) and `keys`: {lhs, label, fn}.
--- Closing it any other way calls `on_close`.
function M.float(title, lines, hls, keys, on_close)
  local footer = {}
  for _, k in ipairs(keys) do
    table.insert(footer, k[1] .. ' ' .. k[2])
  end
  table.insert(lines, '')
  table.insert(lines, table.concat(footer, '   ') .. '   <Esc> refuse')
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  for _, h in ipairs(hls or {}) do
    vim.api.nvim_buf_set_extmark(buf, M.ns, h[1], 0, { line_hl_group = h[2] })
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title:gsub('[\r\n]', ' ') .. ' ',
  })
  local decided = false
  local function finish(fn)
    if decided then
      return
    end
    decided = true
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    fn()
  end
  for _, k in ipairs(keys) do
    vim.keymap.set('n', k[1], function()
      finish(k[3])
    end, { buffer = buf, nowait = true, desc = 'bravebot: ' .. k[2] })
  end
  for _, lhs in ipairs({ '<Esc>', 'q' }) do
    vim.keymap.set('n', lhs, function()
      finish(on_close)
    end, { buffer = buf, nowait = true, desc = 'bravebot: refuse' })
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
  return win, buf
end

local function header(params)
  local lines = { params.title or params.kind }
  if params.why and params.why ~= '' then
    for _, l in ipairs(split('why: ' .. params.why)) do
      table.insert(lines, l)
    end
  end
  return lines
end

-- run -------------------------------------------------------------------------------------------

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
  local keys = {}
  local once, always, reject = option(params, 'allow_once'), option(params, 'allow_always'), rejecting(params)
  if once then
    table.insert(keys, { 'o', 'allow once', function() reply(once) end })
  end
  if always then
    table.insert(keys, { 's', 'allow for session', function() reply(always) end })
  end
  table.insert(keys, { 'r', 'reject', function() reply(reject) end })
  return M.float('bravebot: run', lines, {}, keys, function() reply(nil) end)
end

-- vetContent / readOutput: untrusted bytes inside a margin ----------------------------------------

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
  table.insert(lines, '')
  for _, l in ipairs(split(s.content)) do
    table.insert(lines, chat.MARGIN .. l)
    table.insert(hls, { #lines - 1, 'BravebotUntrusted' })
  end
  local keys = {}
  for _, o in ipairs(params.options or {}) do
    local lhs = ({ allow_once = 'o', allow_always = 's', reject_once = 'r', reject_always = 'R' })[o.kind]
    if lhs then
      table.insert(keys, { lhs, o.name or o.kind, function() reply(o) end })
    end
  end
  return M.float('bravebot: ' .. params.kind, lines, hls, keys, function() reply(nil) end)
end

-- fetch, lspStart, trustRead, delegate: vim.ui.select ---------------------------------------------

function M.select(params, reply)
  local s = params.subject or {}
  local prompt = { params.title or params.kind }
  if s.host then
    table.insert(prompt, 'host: ' .. s.host)
  end
  if s.url then
    table.insert(prompt, 'url: ' .. s.url)
  end
  if s.path then
    table.insert(prompt, 'path: ' .. s.path)
  end
  if s.command then
    table.insert(prompt, 'command: ' .. s.command)
  end
  if params.why and params.why ~= '' then
    table.insert(prompt, 'why: ' .. params.why)
  end
  vim.ui.select(params.options or {}, {
    prompt = table.concat(prompt, '\n') .. '\n',
    kind = 'bravebot.' .. tostring(params.kind),
    format_item = function(o)
      return o.name or o.optionId
    end,
  }, function(choice)
    reply(choice)
  end)
end

-- askUser: vim.ui.input ---------------------------------------------------------------------------

function M.ask_user(params, reply)
  local s = params.subject or {}
  vim.ui.input({ prompt = (s.question or params.title or 'bravebot asks') .. ' ' }, function(text)
    if text == nil then
      reply(nil)
    else
      reply(approving(params) or (params.options or {})[1], { text = text })
    end
  end)
end

-- edit / write: the proposal inline -----------------------------------------------------------------

---@type table<integer, table> pending proposals by buffer
M.proposals = {}

local function draw(p)
  local buf = p.buf
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local proposed = split(p.subject.proposed)
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
    for l = h.newStart, h.newStart + h.newLines - 1 do
      table.insert(virt, { { '+ ' .. (proposed[l + 1] or ''), 'BravebotAdd' } })
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
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  end
  local nbuf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(nbuf, 0, -1, false, split(p.subject.proposed))
  pcall(vim.api.nvim_buf_set_name, nbuf, 'bravebot://proposal/' .. (p.subject.path or buf))
  vim.bo[nbuf].bufhidden = 'wipe'
  vim.bo[nbuf].modifiable = false
  vim.bo[nbuf].filetype = vim.bo[buf].filetype
  vim.cmd('diffthis')
  vim.cmd('vertical rightbelow sbuffer ' .. nbuf)
  vim.cmd('diffthis')
  p.diff_buf = nbuf
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

local function target_buffer(subject)
  local path = subject.uri and vim.uri_to_fname(subject.uri) or subject.path
  local buf = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.b[buf].bravebot_detached = true
    M.detached[buf] = true
  end
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('buffer ' .. buf)
  end
  return buf
end

function M.edit(params, reply)
  local s = params.subject or {}
  local buf = target_buffer(s)
  M.cancel_proposal(buf)
  local hunks = s.hunks or {}
  if #hunks == 0 then
    -- Nothing to show inline (an identical write): a plain question.
    return M.select(params, reply)
  end
  local p = { buf = buf, params = params, subject = s, hunks = hunks, verdicts = {}, reply = reply, mapped = {} }
  M.proposals[buf] = p
  local km = require('bravebot.config').options.keymaps or {}
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
  map('diff', function() M.diff(buf) end, 'show the proposal in a diff')
  vim.api.nvim_create_autocmd({ 'BufUnload', 'BufDelete' }, {
    buffer = buf,
    once = true,
    callback = function()
      M.cancel_proposal(buf)
    end,
  })
  draw(p)
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(hunks[1].oldStart + 1, vim.api.nvim_buf_line_count(buf)), 0 })
  vim.notify(string.format('bravebot: %s proposes %d hunk(s) to %s; %s accept, %s reject, %s/%s all',
    params.kind, #hunks, s.path or '?', tostring(km.accept_hunk), tostring(km.reject_hunk),
    tostring(km.accept_all), tostring(km.reject_all)))
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
  trustRead = M.select,
  delegate = M.select,
  askUser = M.ask_user,
  _unknown = M.unknown,
}

return M
