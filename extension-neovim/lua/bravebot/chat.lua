-- The chat buffers, one per session: streamed agent text, tool calls and results, plans, errors,
-- and quarantined notices and remarks drawn inside a "│ " margin with their own highlight, so text
-- nobody vouched for never looks like the agent's words.
local M = {}

M.ns = vim.api.nvim_create_namespace('bravebot_chat')
M.thinking_ns = vim.api.nvim_create_namespace('bravebot_thinking')
--- Marks spanning the lines each update drew, holding the update as the server sent it: the exact
--- form behind the plain words, one key (`keymaps.show`) away.
M.detail_ns = vim.api.nvim_create_namespace('bravebot_detail')
M.MARGIN = '│ '
--- How many lines of a run's output the chat draws.
M.RUN_LINES = 20
M.SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

vim.api.nvim_set_hl(0, 'BravebotUntrusted', { default = true, link = 'DiagnosticWarn' })
vim.api.nvim_set_hl(0, 'BravebotTool', { default = true, link = 'Comment' })
vim.api.nvim_set_hl(0, 'BravebotPrompt', { default = true, link = 'Title' })
vim.api.nvim_set_hl(0, 'BravebotError', { default = true, link = 'DiagnosticError' })
vim.api.nvim_set_hl(0, 'BravebotThinking', { default = true, link = 'DiagnosticInfo' })
-- A call the person or a gate refused: neither done nor failed.
vim.api.nvim_set_hl(0, 'BravebotRefused', { default = true, link = 'WarningMsg' })
vim.api.nvim_set_hl(0, 'BravebotDone', { default = true, link = 'DiagnosticOk' })
vim.api.nvim_set_hl(0, 'BravebotVetting', { default = true, link = 'WarningMsg' })

---@class bravebot.Chat
---@field buf integer
---@field last? string the kind of the last thing drawn
---@field timer? uv.uv_timer_t the thinking line's clock
---@field started? integer when the running turn began (ms)

local draw_thinking

---@type table<string, bravebot.Chat> by session id (or root, for a state without a session)
M.chats = {}
---@type table<string, integer> how many chat buffers each root has had
local count = {}

local function key(state, session_id)
  return session_id or state.session_id or state.root
end

local function chat_for(state, session_id)
  local k = key(state, session_id)
  local c = M.chats[k]
  if c and vim.api.nvim_buf_is_valid(c.buf) then
    return c
  end
  local buf = vim.api.nvim_create_buf(false, true)
  count[state.root] = (count[state.root] or 0) + 1
  local name = 'bravebot://chat/' .. state.root
  if count[state.root] > 1 then
    name = name .. ' (' .. count[state.root] .. ')'
  end
  local sid = session_id or state.session_id
  if sid and require('bravebot.client').incognito[sid] then
    name = name .. ' (incognito)'
  end
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = 'markdown'
  -- Markdown drawn by treesitter where its parser is there (Neovim ships it), so fenced code is
  -- highlighted by its own language's parser when that one is installed.
  pcall(vim.treesitter.start, buf, 'markdown')
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].modifiable = false
  c = { buf = buf, last = nil, session_id = session_id or state.session_id }
  M.chats[k] = c
  -- The chat has no file to read back: `:e!` would empty it for good. What it holds is kept as
  -- the buffer unloads and put back when Neovim would read it (NVIM-21).
  vim.api.nvim_create_autocmd('BufUnload', {
    buffer = buf,
    callback = function()
      c.kept = {
        lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        marks = vim.api.nvim_buf_get_extmarks(buf, M.ns, 0, -1, { details = true }),
      }
    end,
  })
  vim.api.nvim_create_autocmd('BufReadCmd', {
    buffer = buf,
    callback = function()
      local kept = c.kept
      c.kept = nil
      if not kept then
        return
      end
      vim.bo[buf].modifiable = true
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, kept.lines)
      vim.bo[buf].modifiable = false
      vim.bo[buf].modified = false
      vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
      for _, m in ipairs(kept.marks) do
        pcall(vim.api.nvim_buf_set_extmark, buf, M.ns, m[2], m[3], { line_hl_group = m[4].line_hl_group, end_col = m[4].end_col })
      end
      vim.bo[buf].filetype = 'markdown'
      pcall(vim.treesitter.start, buf, 'markdown')
      draw_thinking(c)
    end,
  })
  local show_key = (require('bravebot.config').options.keymaps or {}).show
  if show_key then
    vim.keymap.set('n', show_key, function()
      local row = vim.api.nvim_win_get_cursor(0)[1]
      local ref = M.ref_at(buf, row)
      local exact = not ref and M.detail_at(c, row)
      if ref then
        require('bravebot.commands').show(ref, state, k)
      elseif exact then
        M.detail_float(exact)
      else
        -- Anywhere else the key does what it always does.
        vim.api.nvim_feedkeys(vim.keycode(show_key), 'n', false)
      end
    end, { buffer = buf, desc = 'bravebot: show the quarantined bytes of this line, or its exact form' })
  end
  return c
end

---@type table<string, string> the tool call each session announced last
M.calls = {}

--- The call a session announced last: the one a question it puts now belongs to.
function M.current_call(state, session_id)
  return M.calls[key(state, session_id)]
end

--- The chat buffer of the state's current session (created when missing).
function M.buf(state, session_id)
  return chat_for(state, session_id).buf
end

--- A window of the current tab that is not a float: where a split can start from.
local function anchor_win()
  local cur = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_config(cur).relative == '' then
    return cur
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(w).relative == '' then
      return w
    end
  end
  return cur
end

--- Show the chat buffer in a split unless it is visible already, with the prompt area under it.
--- With `opts.focus ~= false` the cursor goes to the prompt area.
function M.open(state, opts)
  opts = opts or {}
  local c = chat_for(state)
  local win = vim.fn.bufwinid(c.buf)
  if win == -1 then
    local vertical = require('bravebot.config').options.chat_split ~= 'horizontal'
    win = vim.api.nvim_open_win(c.buf, false, { split = vertical and 'right' or 'below', win = anchor_win() })
    vim.wo[win].foldmethod = 'indent'
    vim.wo[win].foldenable = false
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].conceallevel = 2
    -- The fence lines around literal text stay hidden on the cursor's line too (NVIM-75).
    vim.wo[win].concealcursor = 'n'
    -- A new window opens at the chat's end, so it follows what is drawn next: the chat already
    -- holds its opening lines (the confinement line, NVIM-116) when it is first shown.
    pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(c.buf), 0 })
  end
  M.set_winbar(win, c)
  local pwin = require('bravebot.prompt').open_under(state.root, win)
  if opts.focus ~= false then
    vim.api.nvim_set_current_win(pwin)
  end
  return c.buf
end

--- Where an auto-vetting switch is, in words.
function M.vetting_source(source)
  local words = {
    ['--vet'] = 'bravebot exec --vet',
    ['~/.bravebot/vetting'] = 'your recorded choice in ~/.bravebot/vetting',
    ['~/.bravebot/settings.json'] = 'vetting.auto in ~/.bravebot/settings.json',
  }
  return words[source] or (tostring(source):gsub('%s+', ' '))
end

--- The chat's line for auto-vetting (VET-23): on at the top of a session that opened with it
--- (`opening`), or on or off where it changed mid-session; nil for a session opening asking as usual.
function M.vetting_text(vetting, opening)
  local from = M.vetting_source(vetting.source)
  if vetting.on then
    return string.format('auto-vetting is %son (%s): where a check finds nothing, content nobody vouched for reaches the agent without asking you',
      opening and '' or 'now ', from)
  end
  if opening then
    return nil
  end
  return string.format('auto-vetting is now off (%s): you are asked again before content nobody vouched for reaches the agent', from)
end

--- The chat window's winbar: whose session it shows, whether that one is incognito, and whether
--- auto-vetting answers for the person in it (VET-23).
function M.winbar_text(c)
  local sid = c.session_id
  local vetting = sid and require('bravebot.client').vetting[sid]
  -- The switch as the server names it: short, so a narrow winbar still shows it.
  local suffix = (vetting and vetting.on) and (' · auto-vetting on (' .. vetting.source .. ')') or ''
  if sid and require('bravebot.client').incognito[sid] then
    return 'bravebot: incognito session ' .. sid .. ', nothing kept under ~/.bravebot' .. suffix
  end
  local meter = sid and require('bravebot.usage').meters[sid]
  local usage = meter and (' │ ' .. require('bravebot.usage').short(meter)) or ''
  if c.title then
    return 'bravebot: ' .. c.title .. ' (session ' .. tostring(sid) .. ')' .. suffix .. usage
  end
  return 'bravebot: session ' .. tostring(sid or '-') .. suffix .. usage
end

--- The winbar, cut at the right edge when the window is narrow, so its start stays readable; while
--- a turn runs the spinner comes first, so a narrow window cuts the session's name, not it.
function M.set_winbar(win, c)
  local spinner = c.thinking and ('%#BravebotThinking#' .. c.thinking:gsub('%%', '%%%%') .. '%* ') or ''
  vim.wo[win].winbar = spinner .. '%#BravebotPrompt#' .. M.winbar_text(c):gsub('%%', '%%%%') .. '%*%<'
end

--- Windows showing the old session's chat show the state's current one.
local function swap(state, old_session_id)
  local old = M.chats[old_session_id]
  local new = chat_for(state)
  if old and old ~= new and vim.api.nvim_buf_is_valid(old.buf) then
    for _, win in ipairs(vim.fn.win_findbuf(old.buf)) do
      vim.api.nvim_win_set_buf(win, new.buf)
    end
  end
  for _, win in ipairs(vim.fn.win_findbuf(new.buf)) do
    M.set_winbar(win, new)
  end
  return old, new
end

--- After a new session: windows showing the old session's chat show the new one, which says where
--- the old one went. The old buffer stays, and the old session's late updates still land in it.
function M.replace(state, old_session_id)
  local old = swap(state, old_session_id)
  if require('bravebot.client').incognito[state.session_id] then
    M.note(state, 'incognito session ' .. state.session_id .. ': no record, no prompt history, no audit file under ~/.bravebot')
  end
  if old and vim.api.nvim_buf_is_valid(old.buf) then
    M.note(state, 'new session; the previous one stays in ' .. vim.api.nvim_buf_get_name(old.buf))
  end
end

--- Windows on `buf` that follow its end: every one but the person's current window, and that one
--- too while its cursor sits on the last line (as a terminal's tail follows); one whose cursor
--- the person moved up stays where they put it.
local function following(buf)
  local count = vim.api.nvim_buf_line_count(buf)
  local current = vim.api.nvim_get_current_win()
  return vim.tbl_filter(function(win)
    return win ~= current or vim.api.nvim_win_get_cursor(win)[1] >= count
  end, vim.fn.win_findbuf(buf))
end

local function set_lines(buf, first, last, lines)
  local wins = following(buf)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
  local count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    pcall(vim.api.nvim_win_set_cursor, win, { count, 0 })
  end
end

local function is_empty(buf)
  return vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
end

-- Only the agent's prose is markdown. Everything else (the person's prompts, tool calls and their
-- arguments, results, a run's output, untrusted text, the plugin's notes) is drawn inside a fenced
-- block of tildes, where no markdown applies: brackets, asterisks and backticks stay on the screen
-- byte for byte, and the fence lines themselves are concealed whole (Neovim 0.11's markdown
-- `conceal_lines`). One fence spans every literal line between two stretches of prose.

--- How many tildes a line holds if it could close a tilde fence (0 when it could not). Lines of
--- untrusted text start with the margin and never can: only the person's and the plugin's own
--- lines are ever measured here.
local function closer_length(line)
  local run = line:match('^ ? ? ?(~~~+)%s*$')
  return run and #run or 0
end

--- The fence the agent's prose left open (its character repeated to its length), if any: our own
--- fence would otherwise close it and leave the literal lines as markdown.
local function open_prose_fence(lines)
  local open
  for _, l in ipairs(lines) do
    local run = l:match('^ ? ? ?(```+)') or l:match('^ ? ? ?(~~~+)')
    if run then
      local rest = l:sub(#l:match('^ *') + #run + 1)
      if not open then
        if run:sub(1, 1) == '~' or not rest:find('`', 1, true) then
          open = run
        end
      elseif run:sub(1, 1) == open:sub(1, 1) and #run >= #open and rest:match('^%s*$') then
        open = nil
      end
    end
  end
  return open
end

--- Append whole literal lines (inside the fence), each with an optional highlight group over the
--- whole line.
local function append(c, lines, hl)
  local buf = c.buf
  local longest = 0
  for _, l in ipairs(lines) do
    longest = math.max(longest, closer_length(l))
  end
  local head = {}
  if c.fence and longest >= #c.fence then
    -- A line would close the open fence: close it here and open a longer one.
    table.insert(head, c.fence)
    c.fence = nil
  end
  if not c.fence then
    local prose_from = c.prose_from or 0
    local open = open_prose_fence(vim.api.nvim_buf_get_lines(buf, prose_from, -1, false))
    if open then
      table.insert(head, open)
    end
    c.fence = string.rep('~', math.max(4, longest + 1))
    table.insert(head, c.fence)
  end
  local start = (is_empty(buf) and 0 or vim.api.nvim_buf_line_count(buf)) + #head
  set_lines(buf, is_empty(buf) and 0 or -1, -1, vim.list_extend(head, lines))
  if hl then
    for i = 0, #lines - 1 do
      vim.api.nvim_buf_set_extmark(buf, M.ns, start + i, 0, { line_hl_group = hl, end_col = #lines[i + 1] })
    end
  end
end

--- The literal fence closes where the agent's prose starts again.
local function end_literal(c)
  if c.fence then
    set_lines(c.buf, -1, -1, { c.fence })
    c.fence = nil
    c.prose_from = vim.api.nvim_buf_line_count(c.buf)
  end
end

--- The width untrusted lines are cut to, so a long one wraps onto lines that keep the margin.
--- Where no window shows the chat yet, the width the split `M.open` makes will have; columns the
--- window spends on signs or numbers (its `textoff`) are not the text's.
local function margin_width(buf)
  local win = vim.fn.bufwinid(buf)
  local width
  if win ~= -1 then
    local info = vim.fn.getwininfo(win)[1]
    width = vim.api.nvim_win_get_width(win) - (info and info.textoff or 0)
  else
    width = require('bravebot.config').options.chat_split ~= 'horizontal' and math.floor((vim.o.columns - 1) / 2)
      or vim.o.columns
    -- The columns a new window takes for numbers and signs, as the global options say.
    if vim.o.number or vim.o.relativenumber then
      width = width - math.max(vim.o.numberwidth, 4)
    end
    if vim.o.signcolumn:match('^yes') then
      width = width - 2
    end
  end
  return math.max(20, width - 1 - vim.fn.strdisplaywidth(M.MARGIN))
end

--- `line` cut into pieces of at most `width` display cells, each to be drawn after the margin.
function M.cut(line, width)
  local out = {}
  local rest = line
  while vim.fn.strdisplaywidth(rest) > width do
    local n = 0
    local chars = vim.fn.strchars(rest)
    while n < chars and vim.fn.strdisplaywidth(vim.fn.strcharpart(rest, 0, n + 1)) <= width do
      n = n + 1
    end
    n = math.max(n, 1)
    table.insert(out, vim.fn.strcharpart(rest, 0, n))
    rest = vim.fn.strcharpart(rest, n)
  end
  table.insert(out, rest)
  return out
end

--- Lines of untrusted text, each inside the margin, long ones cut so every screen line has it.
function M.margin_lines(buf, text)
  local lines = {}
  local width = margin_width(buf)
  for _, l in ipairs(vim.split(text or '', '\n', { plain = true })) do
    if l ~= '' then
      for _, piece in ipairs(M.cut(l, width)) do
        table.insert(lines, M.MARGIN .. piece)
      end
    end
  end
  return lines
end

--- Marks at the first line of each block of untrusted lines, so a block is cut again to a
--- window's new width.
M.untrusted_ns = vim.api.nvim_create_namespace('bravebot_untrusted')

--- `sources` (lines of untrusted text, each drawn, an empty one as the bare margin) cut to `width`,
--- every piece inside the margin.
local function cut_block(sources, width)
  local lines = {}
  for _, l in ipairs(sources) do
    for _, piece in ipairs(M.cut(l, width)) do
      table.insert(lines, M.MARGIN .. piece)
    end
  end
  return lines
end

--- Untrusted lines, every one inside the margin with the untrusted highlight, long ones cut to
--- the chat's width; the block is kept to be cut again when a window on the chat is resized.
local function untrusted_block(c, sources)
  local width = margin_width(c.buf)
  local lines = cut_block(sources, width)
  append(c, lines, 'BravebotUntrusted')
  local first = vim.api.nvim_buf_line_count(c.buf) - #lines
  local id = vim.api.nvim_buf_set_extmark(c.buf, M.untrusted_ns, first, 0, { right_gravity = false })
  c.blocks = c.blocks or {}
  c.blocks[id] = { sources = sources, count = #lines, width = width }
end

--- Every untrusted block of the chat cut again to the width of the window now showing it: a line
--- cut for a wider window would wrap without the margin, one cut for a narrower one is short.
function M.recut(c)
  local width = margin_width(c.buf)
  -- From the last block up: a block's lines replaced never move the mark of one above it, while
  -- the mark of a block right below would be left above the new lines.
  local marks = vim.api.nvim_buf_get_extmarks(c.buf, M.untrusted_ns, -1, 0, {})
  for _, m in ipairs(marks) do
    local id, row = m[1], m[2]
    local b = (c.blocks or {})[id]
    if b and b.width ~= width then
      do
        local lines = cut_block(b.sources, width)
        vim.api.nvim_buf_clear_namespace(c.buf, M.ns, row, row + b.count)
        set_lines(c.buf, row, row + b.count, lines)
        for i = 0, #lines - 1 do
          vim.api.nvim_buf_set_extmark(c.buf, M.ns, row + i, 0, { line_hl_group = 'BravebotUntrusted', end_col = #lines[i + 1] })
        end
        b.count, b.width = #lines, width
      end
    end
  end
end

vim.api.nvim_create_autocmd('WinResized', {
  group = vim.api.nvim_create_augroup('bravebot_chat_recut', { clear = true }),
  callback = function()
    -- Each chat shown in a window checks its own width: only one whose width changed is cut again.
    for _, c in pairs(M.chats) do
      if vim.api.nvim_buf_is_valid(c.buf) and vim.fn.bufwinid(c.buf) ~= -1 then
        M.recut(c)
      end
    end
  end,
})

--- The lines of `text` that are not empty.
local function non_empty(text)
  return vim.tbl_filter(function(l) return l ~= '' end, vim.split(text or '', '\n', { plain = true }))
end

--- Untrusted text: every line inside the margin, with the untrusted highlight.
local function append_untrusted(c, header, text)
  local sources = non_empty(header)
  vim.list_extend(sources, non_empty(text))
  untrusted_block(c, sources)
end
M.append_untrusted = function(state, session_id, header, text)
  local c = chat_for(state, session_id)
  append_untrusted(c, header, text)
  c.last = 'untrusted'
end

local function append_text(c, delta)
  local buf = c.buf
  local parts = vim.split(delta, '\n', { plain = true })
  end_literal(c)
  if c.last ~= 'agentText' then
    if is_empty(buf) then
      c.prose_from = 0
    else
      set_lines(buf, -1, -1, { '' })
    end
  end
  local n = vim.api.nvim_buf_line_count(buf)
  local last = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
  parts[1] = last .. parts[1]
  set_lines(buf, n - 1, n, parts)
end

function M.prompt(state, text, files, mentions, ranges)
  local c = chat_for(state)
  -- The person's own turn, between a loop's ticks, is no tick.
  local loop = M.loops[key(state)]
  if loop then
    loop.waiting = false
  end
  local lines = {}
  for i, l in ipairs(vim.split(text, '\n', { plain = true })) do
    lines[i] = (i == 1 and '> ' or '  ') .. l
  end
  if files and #files > 0 then
    table.insert(lines, '  files: ' .. table.concat(files, ', '))
  end
  if mentions and #mentions > 0 then
    table.insert(lines, '  pointed at: ' .. table.concat(mentions, ', '))
  end
  for _, r in ipairs(ranges or {}) do
    table.insert(lines, '  comment on: ' .. require('bravebot.review').place(r))
  end
  append(c, lines, 'BravebotPrompt')
  c.last = 'prompt'
end

--- A line of the plugin's own, in a session's chat.
function M.note_to(state, session_id, text)
  local c = chat_for(state, session_id)
  append(c, { '-- ' .. text }, 'BravebotTool')
  c.last = 'note'
end

function M.note(state, text)
  M.note_to(state, nil, text)
end

--- Draws, at the top of a session's chat, the line naming the platform's confinement level and
--- what the session confines: the status's `confinement` (PROTO-14, NVIM-116).
function M.confinement(state, session_id, text)
  local c = chat_for(state, session_id)
  append(c, { 'Confinement: ' .. text }, 'BravebotTool')
  c.last = 'note'
end

--- Draws auto-vetting's line in a session's chat and shows it in the winbar.
function M.vetting(state, session_id, vetting, opening)
  local text = M.vetting_text(vetting, opening)
  local c = chat_for(state, session_id)
  if text then
    append(c, { '⚠ ' .. text }, 'BravebotVetting')
    c.last = 'note'
  end
  for _, win in ipairs(vim.fn.win_findbuf(c.buf)) do
    M.set_winbar(win, c)
  end
end

--- A turn that ended in an error: the reason as the endpoint gave it (inside the margin: those are
--- the endpoint's bytes, nobody vouched for them) and what to change, in the plugin's own words.
function M.error(state, session_id, message, hint)
  local c = chat_for(state, session_id)
  append(c, { '!! the model request failed; the endpoint said:' }, 'BravebotError')
  append_untrusted(c, 'reason:', message)
  local lines = {}
  for _, l in ipairs(hint or {}) do
    table.insert(lines, '   ' .. l)
  end
  append(c, lines, 'BravebotError')
  c.last = 'error'
end

local function elapsed(c)
  return math.floor((vim.uv.now() - (c.started or vim.uv.now())) / 1000)
end

function draw_thinking(c)
  if not vim.api.nvim_buf_is_valid(c.buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(c.buf, M.thinking_ns, 0, -1)
  local before = c.thinking
  c.thinking = nil
  if c.started then
    local frame = M.SPINNER[(c.frame or 0) % #M.SPINNER + 1]
    -- While a question of this session waits, the turn waits for the person, not the model.
    local asking = false
    for _, e in ipairs(require('bravebot.questions').pending) do
      asking = asking or (c.session_id ~= nil and e.session_id == c.session_id)
    end
    c.thinking = asking and string.format('%s waiting for your answer, %ds (:Bravebot answer)', frame, elapsed(c))
      or string.format('%s thinking, %ds (:Bravebot cancel stops it)', frame, elapsed(c))
    -- Under the last line, where it reads as the next thing to come, when there is room...
    vim.api.nvim_buf_set_extmark(c.buf, M.thinking_ns, vim.api.nvim_buf_line_count(c.buf) - 1, 0, {
      virt_lines = { { { c.thinking, 'BravebotThinking' } } },
    })
  end
  -- ...and in the chat window's winbar, which stays on the screen when the chat is full and that
  -- line is below the window's last row.
  if c.thinking ~= before then
    for _, win in ipairs(vim.fn.win_findbuf(c.buf)) do
      if vim.wo[win].winbar ~= '' then
        M.set_winbar(win, c)
      end
    end
  end
end

--- The "thinking" line under the chat while a turn runs, with the seconds it has taken.
function M.thinking(state, session_id, on)
  require('bravebot.attention').changed()
  local c = chat_for(state, session_id)
  if c.timer then
    c.timer:stop()
    c.timer:close()
    c.timer = nil
  end
  c.started = on and vim.uv.now() or nil
  draw_thinking(c)
  if on then
    c.timer = vim.uv.new_timer()
    c.frame = 0
    c.timer:start(150, 150, vim.schedule_wrap(function()
      c.frame = (c.frame or 0) + 1
      draw_thinking(c)
    end))
  end
end

--- The thinking line's text, or nil when no turn runs (for tests and the statusline).
function M.thinking_text(state, session_id)
  return chat_for(state, session_id).thinking
end

local function one_line(s)
  if type(s) == 'table' then
    return vim.json.encode(s)
  end
  if s == nil or s == vim.NIL then
    return ''
  end
  return (tostring(s):gsub('[\r\n]+', ' '))
end

--- `n` and the word it counts, singular for one: "1 line", "2 lines". `n` is a count the server
--- sent; anything but a number is drawn as it came, with the plural.
local function count_of(n, word)
  return one_line(n) .. ' ' .. word .. (n == 1 and '' or 's')
end

--- An argument longer than this many lines, or bytes, is summarised in the chat rather than drawn.
M.ARG_LINES = 6
M.ARG_BYTES = 400

--- A tool call's arguments (the server's `routing`: the call's arguments but `why`), one name a
--- line in name order under the call, each value byte for byte (a string as it is, every line of
--- it; anything else as JSON); a long one (an edit's whole text) is summarised by its size.
function M.argument_lines(routing, indent)
  if routing == nil or routing == vim.NIL then
    return {}
  end
  if type(routing) ~= 'table' then
    routing = { arguments = routing }
  end
  local names = vim.tbl_keys(routing)
  table.sort(names, function(x, y) return tostring(x) < tostring(y) end)
  local out = {}
  for _, n in ipairs(names) do
    local v = routing[n]
    local shown = type(v) == 'string' and v or vim.json.encode(v)
    local lines = vim.split(shown, '\n', { plain = true })
    local head = indent .. '    ' .. tostring(n) .. ': '
    if #lines > M.ARG_LINES or #shown > M.ARG_BYTES then
      table.insert(out, head .. string.format('(%s, %s: too long to draw here)', count_of(#lines, 'line'), count_of(#shown, 'byte')))
    else
      for i, l in ipairs(lines) do
        table.insert(out, (i == 1 and head or (indent .. '      ')) .. l)
      end
    end
  end
  return out
end

--- A label in plain words: `(U,priv)` is untrusted and private, each word explained.
function M.label_words(label)
  local trust, reach = tostring(label or ''):match('^%(([TU]),(%a+)%)$')
  if not trust then
    return 'label ' .. one_line(label)
  end
  return string.format('%s, %s',
    trust == 'T' and 'trusted (the person or the workspace vouched for it)' or 'untrusted (nobody vouched for it)',
    reach == 'pub' and 'public (it may leave this machine)' or 'private (it must not leave this machine)')
end

--- A label in two words: `(U,priv)` is "untrusted, private"; one this plugin does not know is
--- shown as sent.
function M.label_short(label)
  local trust, reach = tostring(label or ''):match('^%(([TU]),(%a+)%)$')
  if not trust then
    return 'label ' .. one_line(label)
  end
  return (trust == 'T' and 'trusted' or 'untrusted') .. ', ' .. (reach == 'pub' and 'public' or 'private')
end

--- What each tool does, in words; a tool this plugin does not know (an MCP server's) is named as
--- the server sent it. The exact name is one key away (`keymaps.show` on the line).
M.TOOL_WORDS = {
  ask_user = 'ask you',
  diagnostics = "read the editor's diagnostics",
  edit_file = 'edit a file',
  fetch_url = 'fetch a web page',
  job_output = "read a background job's output",
  list_files = 'list files',
  load_skill = 'load a skill',
  lsp = 'ask the language server',
  read_file = 'read a file',
  read_git = 'read from git',
  read_output = "read a program's output",
  run = 'run a command',
  schedule_next = 'schedule the next tick',
  search = 'search the files',
  spawn_agent = 'start a delegate',
  spawn_processor = 'start a processor',
  todo_write = 'update the plan',
  vet_content = 'check content',
  watch_file = 'watch a file',
  write_file = 'write a file',
}

--- A tool's name in words.
function M.tool_words(tool)
  return M.TOOL_WORDS[tool] or one_line(tool)
end

--- What a reference is, in plain words, and how to read what it stands for.
function M.explain(ref, label)
  return string.format('%s is what the agent holds instead of these bytes: it can hand the reference to a tool but never reads them. They are %s. :Bravebot show %s opens them for you.',
    one_line(ref), M.label_words(label), one_line(ref))
end

--- The reference drawn on or just above `line` (1-based) of a chat buffer, if any.
function M.ref_at(buf, line)
  for l = line, math.max(1, line - 1), -1 do
    local text = vim.api.nvim_buf_get_lines(buf, l - 1, l, false)[1] or ''
    local ref = text:match('^' .. vim.pesc(M.MARGIN) .. 'quarantined (ref:%d+) ') or text:match('^  (ref:%d+) is what the agent holds')
    if ref then
      return ref
    end
  end
end

--- A slot's bytes in a float, every line inside the margin, under what they are in plain words.
function M.show_float(shown)
  local lines = {
    string.format('%s from %s: %s, %s', one_line(shown.ref), one_line(shown.origin), count_of(shown.lines, 'line'), count_of(shown.bytes, 'byte')),
    'They are ' .. M.label_words(shown.label) .. '.',
    'Shown to you only: the agent holds ' .. one_line(shown.ref) .. ' and never reads these bytes.',
    '',
  }
  local first = #lines
  local buf = vim.api.nvim_create_buf(false, true)
  local width = math.min(100, vim.o.columns - 4)
  local body = {}
  if type(shown.picture) == 'table' then
    -- A terminal cannot draw a picture: what is held is said instead, the type being the
    -- server's word, inside the margin with everything else it sent.
    table.insert(body, M.MARGIN .. string.format('A picture (%s, %s bytes of base64) is held; a terminal cannot draw it.',
      one_line(shown.picture.mediaType), one_line(#(shown.picture.data or ''))))
  end
  for _, l in ipairs(vim.split(shown.text or '', '\n', { plain = true })) do
    for _, piece in ipairs(M.cut(l, width - 4)) do
      table.insert(body, M.MARGIN .. piece)
    end
  end
  if body[#body] == M.MARGIN then
    table.remove(body)
  end
  vim.list_extend(lines, body)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'bravebot_show'
  for i = first, #lines - 1 do
    vim.api.nvim_buf_set_extmark(buf, M.ns, i, 0, { line_hl_group = 'BravebotUntrusted' })
  end
  local height = math.max(3, math.min(#lines, vim.o.lines - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 3),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' bravebot: ' .. one_line(shown.ref) .. ' (untrusted, for you only) ',
    footer = ' q closes ',
    footer_pos = 'right',
  })
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', lhs, function()
      if vim.api.nvim_win_is_valid(win) then
        vim.api.nvim_win_close(win, true)
      end
    end, { buffer = buf, nowait = true })
  end
  return win, buf
end

--- Fields whose values are not repeated in the exact form: text the chat draws already, in full or
--- inside the margin (the agent's prose, untrusted text, a run's output).
local NOT_REPEATED = { delta = true, text = true, summary = true, report = true, verdictText = true }

--- The exact form of an update: each field but the drawn texts, as the server sent it (JSON).
function M.exact_lines(update)
  local names = vim.tbl_keys(update)
  table.sort(names, function(x, y) return tostring(x) < tostring(y) end)
  local lines = {}
  for _, n in ipairs(names) do
    if not NOT_REPEATED[n] then
      table.insert(lines, tostring(n) .. ': ' .. vim.json.encode(update[n]))
    end
  end
  return lines
end

--- The exact form drawn at `row` (1-based) of a chat, if any.
function M.detail_at(c, row)
  local marks = vim.api.nvim_buf_get_extmarks(c.buf, M.detail_ns, { row - 1, 0 }, { row - 1, -1 },
    { details = true, overlap = true })
  for i = #marks, 1, -1 do
    local exact = (c.details or {})[marks[i][1]]
    if exact then
      return exact
    end
  end
end

--- A float with an update's exact form, under a line saying what it is; q closes it.
function M.detail_float(lines)
  local all = { 'As the server sent it (the chat says it in words):', '' }
  vim.list_extend(all, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  local width = math.min(100, vim.o.columns - 4)
  local shown = {}
  for _, l in ipairs(all) do
    vim.list_extend(shown, M.cut(l, width - 2))
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, shown)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local height = math.max(3, math.min(#shown, vim.o.lines - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor', width = width, height = height,
    row = math.floor((vim.o.lines - height) / 3), col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal', border = 'rounded', title = ' bravebot: the exact form ', footer = ' q closes ', footer_pos = 'right',
  })
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', lhs, function()
      if vim.api.nvim_win_is_valid(win) then
        vim.api.nvim_win_close(win, true)
      end
    end, { buffer = buf, nowait = true })
  end
  return win, buf
end

--- The fields each kind's drawing shows; callId only ties a result to its call. Any other field
--- is drawn too, inside the margin, so nothing the server sends is silently dropped.
M.FIELDS = {
  agentText = { 'delta' },
  toolCall = { 'callId', 'tool', 'why', 'routing' },
  toolResult = { 'callId', 'status', 'summary' },
  quarantined = { 'ref', 'origin', 'lines', 'bytes', 'label', 'picture' },
  remark = { 'text' },
  heldBack = { 'path', 'verdict', 'verdictText' },
  runOutput = { 'stream', 'text', 'bytes', 'trusted', 'label' },
  check = { 'state', 'lines', 'file', 'completed', 'delegate', 'verdict' },
  plan = { 'todos' },
  turnEnded = { 'stopReason' },
  questionClosed = { 'questionId' },
  checkpoint = { 'checkpointId', 'files' },
  delegate = { 'callId', 'number', 'delegateKind', 'depth', 'state', 'task', 'stopReason', 'report', 'trusted', 'label' },
}

--- How deep under delegates a call is: `delegate-N:id` is a call of delegate N (1), and each
--- nested delegate adds its own prefix; a delegate's start, `…delegate-N`, sits at its
--- starter's depth.
function M.call_depth(call_id)
  local depth = 0
  local parts = vim.split(tostring(call_id or ''), ':', { plain = true })
  for i = 1, #parts - 1 do
    if parts[i]:match('^delegate%-%d+$') then
      depth = depth + 1
    end
  end
  return depth
end

--- A tool result's status as a mark, a word and a highlight: a tool that ran and failed (a run's
--- non-zero exit), or could not run, reads as an error; a refused one as refused.
local RESULTS = {
  ok = { mark = '↳', word = 'done', hl = 'BravebotDone' },
  refused = { mark = '⊘', word = 'refused', hl = 'BravebotRefused' },
  failed = { mark = '✗', word = 'failed', hl = 'BravebotError' },
  error = { mark = '✗', word = 'could not run', hl = 'BravebotError' },
}

--- A check's verdict in one word, and its highlight; one this plugin does not know is shown as sent.
local VERDICTS = {
  safe = { 'safe', 'BravebotDone' },
  unsafe = { 'unsafe', 'BravebotError' },
  inconclusive = { 'inconclusive', 'BravebotRefused' },
}

--- A delegate's state in words; the wire word is kept for one this plugin does not know.
local DELEGATE_STATES = { running = 'running', waiting = 'waiting on you', done = 'done', failed = 'failed',
  cancelled = 'cancelled' }

---@type table<string, { prompt: string, ticks: integer, waiting: boolean }> the loop each session runs
M.loops = {}

--- Draw one session/update in the chat of the session it belongs to.
function M.on_update(state, update, session_id)
  local c = chat_for(state, session_id)
  local kind = update.kind
  -- Counts are the meter's, drawn in the winbar, not lines of the conversation (NVIM-84).
  if kind == 'usage' then
    require('bravebot.usage').on_update(session_id or state.session_id, update)
    for _, win in ipairs(vim.fn.win_findbuf(c.buf)) do
      M.set_winbar(win, c)
    end
    return
  end
  local first = is_empty(c.buf) and 0 or vim.api.nvim_buf_line_count(c.buf)
  -- A loop's tick sends no prompt from here: its first update says a tick began.
  local loop = M.loops[key(state, session_id)]
  if loop and loop.waiting and kind ~= 'turnEnded' then
    loop.waiting = false
    loop.ticks = loop.ticks + 1
    append(c, { string.format('-- loop tick %d: %s', loop.ticks, one_line(loop.prompt)) }, 'BravebotPrompt')
  end
  if loop and kind == 'toolCall' and update.tool == 'schedule_next' then
    loop.asked_next = true
  end
  if kind == 'agentText' then
    append_text(c, update.delta or '')
  elseif kind == 'toolCall' then
    M.calls[key(state, session_id)] = update.callId
    local why = one_line(update.why)
    -- A delegate's call is indented under it, four columns a level (DELEG-60).
    local indent = string.rep('    ', M.call_depth(update.callId))
    local line = indent .. '▸ ' .. M.tool_words(update.tool) .. (why ~= '' and (': ' .. why) or '')
    local lines = { line }
    vim.list_extend(lines, M.argument_lines(update.routing, indent))
    append(c, lines, 'BravebotTool')
  elseif kind == 'toolResult' then
    -- The outcome in a word with a mark of its own, so a refused call never looks done (NVIM-77);
    -- a status this plugin does not know is shown as sent.
    local outcome = RESULTS[update.status] or { mark = '↳', word = one_line(update.status), hl = 'BravebotTool' }
    local lines = {}
    local indent = string.rep('    ', M.call_depth(update.callId))
    for i, l in ipairs(vim.split(update.summary or '', '\n', { plain = true })) do
      lines[i] = indent .. (i == 1 and ('  ' .. outcome.mark .. ' ' .. outcome.word .. ': ') or '    ') .. l
    end
    append(c, lines, outcome.hl)
  elseif kind == 'runOutput' then
    -- What a run printed on one stream: the first RUN_LINES lines inside the margin, then how
    -- many more there were.
    local header = string.format('%s of the run (%s, %s):', one_line(update.stream),
      update.trusted == true and 'trusted' or 'untrusted', count_of(update.bytes, 'byte'))
    if update.label ~= nil then
      header = string.format('%s of the run (%s, %s):', one_line(update.stream), M.label_short(update.label), count_of(update.bytes, 'byte'))
    end
    local all = vim.split(update.text or '', '\n', { plain = true })
    if all[#all] == '' then
      table.remove(all)
    end
    local shown = vim.list_slice(all, 1, M.RUN_LINES)
    local sources = non_empty(header)
    vim.list_extend(sources, shown)
    if #all > #shown then
      table.insert(sources, '… ' .. count_of(#all - #shown, 'more line'))
    end
    untrusted_block(c, sources)
  elseif kind == 'quarantined' then
    append_untrusted(c, string.format('quarantined %s from %s (%s): %s, %s', one_line(update.ref),
      one_line(update.origin), M.label_short(update.label), count_of(update.lines, 'line'), count_of(update.bytes, 'byte')), nil)
    append(c, { '  ' .. M.explain(update.ref, update.label) }, 'BravebotTool')
    if update.picture == true then
      append(c, { '  It is a picture: a terminal cannot draw it, so :Bravebot show says what kind it is.' }, 'BravebotTool')
    end
    c.refs = c.refs or {}
    table.insert(c.refs, { ref = update.ref, label = update.label, origin = update.origin })
  elseif kind == 'questionClosed' then
    -- Said before the question is taken down, so its title can be named (ATTN-4).
    local waiting = require('bravebot.questions').find(update.questionId)
    local title = waiting and one_line(waiting.title) or 'a question'
    append(c, { string.format('-- no longer waiting: %s; refused, and an answer now is refused too', title) }, 'BravebotTool')
  elseif kind == 'remark' then
    -- A processor's words: for the person only, and nobody vouched for them.
    append_untrusted(c, 'remark (for you only, unverified):', update.text)
  elseif kind == 'notice' then
    -- The server's own words about the session (a question that timed out, checkpoints
    -- dropped): drawn as the plugin's own lines, never inside the margin (NVIM-119).
    local lines = {}
    for line in tostring(update.text):gmatch('[^\n]+') do
      table.insert(lines, '-- ' .. line)
    end
    append(c, lines, 'BravebotTool')
  elseif kind == 'autoVetting' then
    local sid = session_id or state.session_id
    local vetting = { on = update.on == true, source = tostring(update.source) }
    require('bravebot.client').vetting[sid] = vetting
    M.vetting(state, sid, vetting, false)
  elseif kind == 'heldBack' then
    -- A file the check judged unsafe, held back from the agent (NVIM-74): the path and verdict
    -- in the plugin's words, the check's reasons inside the margin.
    append(c, { string.format('  ⊘ %s held back from the agent: the check judged it %s', one_line(update.path),
      one_line(update.verdict)) }, 'BravebotTool')
    append_untrusted(c, "the check's reasons (unverified):",
      (update.verdictText ~= nil and update.verdictText ~= '') and update.verdictText or '(none given)')
  elseif kind == 'check' then
    local s = 'check ' .. one_line(update.state)
    local hl = 'BravebotTool'
    if update.verdict ~= nil then
      -- The outcome in one word (PROTO-12), first, where the eye lands.
      local v = VERDICTS[update.verdict] or { one_line(update.verdict), 'BravebotTool' }
      s = 'check ended: ' .. v[1]
      hl = v[2]
    end
    if update.lines ~= nil then
      s = s .. ' (' .. count_of(update.lines, 'line') .. ')'
    end
    -- A check over a picture or a PDF reads the file itself, which has no lines (PIC-1).
    if update.file ~= nil then
      s = s .. ' (' .. (update.file == 'pdf' and 'a PDF' or update.file == 'picture' and 'a picture' or one_line(update.file)) .. ')'
    end
    if update.completed ~= nil then
      s = s .. (update.completed == true and ', completed' or ', not completed')
    end
    -- A delegate's check (DELEG-71) is indented under it, as its calls are, and names it.
    local indent = ''
    if update.delegate ~= nil then
      s = s .. ', delegate ' .. one_line(update.delegate)
      indent = string.rep('    ', (c.delegate_depths or {})[update.delegate] or 1)
    end
    append(c, { indent .. '  · ' .. s }, hl)
  elseif kind == 'plan' then
    local lines = { 'Plan:' }
    for _, t in ipairs(update.todos or {}) do
      local mark = (t.status == 'completed' and 'x') or (t.status == 'in_progress' and '~') or ' '
      table.insert(lines, string.format('- [%s] %s', mark, one_line(t.content)))
    end
    append(c, lines, nil)
  elseif kind == 'delegate' then
    -- One line a state: number, kind, state and task, at the depth of whoever started it; an
    -- ended one's report follows, a trusted one as plain lines, an untrusted one in the margin.
    local indent = string.rep('    ', math.max(0, (tonumber(update.depth) or 1) - 1))
    -- Its depth, for the lines of its checks.
    c.delegate_depths = c.delegate_depths or {}
    if update.number ~= nil then
      c.delegate_depths[update.number] = tonumber(update.depth) or 1
    end
    local words = DELEGATE_STATES[update.state] or one_line(update.state)
    local line = string.format('%s◆ delegate %s · %s · %s: %s', indent, one_line(update.number), one_line(update.delegateKind),
      words, one_line(update.task))
    if update.stopReason ~= nil and update.stopReason ~= 'endTurn' then
      line = line .. ' (stopped: ' .. one_line(update.stopReason) .. ')'
    end
    append(c, { line }, update.state == 'failed' and 'BravebotError' or 'BravebotTool')
    if update.report ~= nil then
      if update.trusted == true then
        local lines = { string.format('%s    report of delegate %s (%s):', indent, one_line(update.number), M.label_short(update.label)) }
        for _, l in ipairs(vim.split(update.report, '\n', { plain = true })) do
          table.insert(lines, indent .. '    ' .. l)
        end
        append(c, lines, nil)
      else
        append_untrusted(c, string.format('report of delegate %s (%s: its context met content nobody vouched for; the agent holds only a reference):',
          one_line(update.number), M.label_short(update.label)), update.report)
      end
    end
  elseif kind == 'checkpoint' then
    -- The workspace as it was before the turn (or restore) that changed these files: named, with
    -- the command that puts them back. A turn that changed nothing draws no line.
    local files = type(update.files) == 'table' and update.files or {}
    local id = one_line(update.checkpointId)
    local sid = session_id or state.session_id
    local cps = require('bravebot.checkpoints')
    c.checkpoints = c.checkpoints or {}
    table.insert(c.checkpoints, id)
    if cps.restoring[sid] ~= nil or (cps.undo[sid] ~= nil and one_line(cps.undo[sid]) == id) then
      append(c, { string.format('-- checkpoint %s, before this restore: %s; :Bravebot restore %s undoes the restore', id,
        cps.files_words(files), id) }, 'BravebotTool')
    elseif #files > 0 then
      append(c, { string.format('-- checkpoint %s, before this turn, which changed %s; :Bravebot restore %s puts %s back',
        id, cps.files_words(files), id, #files == 1 and 'it' or 'them') }, 'BravebotTool')
      append(c, { '-- :Bravebot review lists its hunks to review; :Bravebot comment on a selection answers the agent' },
        'BravebotTool')
      require('bravebot.review').turn_changed(sid, id, files)
    end
  elseif kind == 'turnEnded' then
    -- The stop reason in words; one this plugin does not know is shown as sent.
    local words = ({ endTurn = 'done', cancelled = 'cancelled', maxRounds = 'stopped after too many rounds',
      error = 'failed, the reason follows' })[update.stopReason]
    append(c, { '-- turn ended: ' .. (words or one_line(update.stopReason)) }, 'BravebotTool')
    -- Nothing waits any more, whether or not the prompt's reply has come yet.
    M.thinking(state, session_id, false)
    if loop then
      -- The server ends a loop on a tick's error, and a self-paced one on a tick that did not
      -- ask for the next (LOOP-2, LOOP-3): say so here rather than at the next stop.
      local over = update.stopReason == 'error' and 'the loop ended with this tick\'s error'
        or (loop.self_paced and not loop.asked_next and 'the loop ended: this tick did not ask for another')
      loop.waiting, loop.asked_next = true, false
      if over then
        M.loops[key(state, session_id)] = nil
        append(c, { '-- ' .. over }, 'BravebotTool')
      end
    end
  else
    append_untrusted(c, 'update ' .. one_line(kind) .. ' (unknown to this plugin):', vim.inspect(update))
  end
  local known = M.FIELDS[kind]
  if known then
    local extra = {}
    for field, value in pairs(update) do
      if field ~= 'kind' and not vim.tbl_contains(known, field) then
        table.insert(extra, tostring(field) .. ': ' .. one_line(value))
      end
    end
    if #extra > 0 then
      table.sort(extra)
      append_untrusted(c, kind .. ' also sent:', table.concat(extra, '\n'))
    end
  end
  c.last = kind
  -- The exact form behind the words, for every line this update drew but the agent's prose.
  local last = vim.api.nvim_buf_line_count(c.buf) - 1
  if kind ~= 'agentText' and last >= first then
    local id = vim.api.nvim_buf_set_extmark(c.buf, M.detail_ns, first, 0, { end_row = last, end_col = 0, right_gravity = false, end_right_gravity = true })
    c.details = c.details or {}
    c.details[id] = M.exact_lines(update)
  end
  draw_thinking(c)
end

--- After a resume: the session's chat holds its transcript (the person's prompts as prompts, the
--- agent's replies as its text) and says that the references it named are gone.
function M.resumed(state, old_session_id, result)
  local c = chat_for(state)
  set_lines(c.buf, 0, -1, { '' })
  vim.api.nvim_buf_clear_namespace(c.buf, M.ns, 0, -1)
  c.last, c.refs, c.fence, c.prose_from, c.blocks = nil, nil, nil, 0, nil
  vim.api.nvim_buf_clear_namespace(c.buf, M.untrusted_ns, 0, -1)
  c.title = result.title ~= vim.NIL and result.title or nil
  swap(state, old_session_id)
  M.note(state, string.format('resumed session %s: %s (mode %s, in %s)', one_line(result.sessionId),
    one_line(result.title), one_line(result.mode), one_line(result.cwd)))
  local vetting = require('bravebot.client').vetting[state.session_id]
  if vetting and vetting.on then
    M.vetting(state, state.session_id, vetting, true)
  end
  for _, entry in ipairs(result.transcript or {}) do
    if entry.role == 'person' then
      M.prompt(state, entry.text or '')
    else
      append_text(c, entry.text or '')
      -- One reply a paragraph: the next entry starts a line of its own.
      c.last = 'agentReply'
    end
  end
  M.note(state, 'earlier quarantined items and their ref:N are gone: the agent reads again what it needs')
  if old_session_id and old_session_id ~= state.session_id then
    local old = M.chats[old_session_id]
    if old and vim.api.nvim_buf_is_valid(old.buf) then
      M.note(state, 'the previous session stays in ' .. vim.api.nvim_buf_get_name(old.buf))
    end
  end
end

return M
