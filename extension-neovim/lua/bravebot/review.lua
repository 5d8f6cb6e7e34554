-- Reviewing what a turn changed (issue 36): `:Bravebot review` puts every hunk of every file the
-- last turn changed (against the checkpoint made before the turn) in the quickfix list, with
-- whether the person marked the file reviewed; `:Bravebot review diff` shows a file's diff against
-- that checkpoint; `:Bravebot reviewed` / `unreviewed` mark a file (the plugin's own state, per
-- session and file, lost once the file holds other text); `:Bravebot comment` on a range starts the
-- next turn with the person's words and the range's place, never the range's text.
local M = {}

local rpc = require('bravebot.protocol')

local function client()
  return require('bravebot.client')
end

local function one_line(s)
  if s == nil or s == vim.NIL then
    return ''
  end
  return (tostring(s):gsub('[\r\n]+', ' '))
end

---@type table<string, { checkpointId: string, files: string[] }> by session id: the last turn that changed files
M.turns = {}
---@type table<string, table<string, string>> by session id, then path: the file's text when marked reviewed
M.marks = {}
---@type table<string, { text: string, ranges: table[] }[]> by session id: comments waiting for a turn to end
M.queued = {}

local ABSENT = '\0absent'

--- The chat saw a turn's checkpoint: that turn's files are the ones to review.
function M.turn_changed(session_id, checkpoint_id, files)
  M.turns[session_id] = { checkpointId = checkpoint_id, files = vim.deepcopy(files) }
end

--- `line 3` or `lines 3-7`.
function M.lines_words(first, last)
  return first == last and ('line ' .. first) or string.format('lines %d-%d', first, last)
end

--- A range as the chat names it: `lines 2-3 of src/a.rs`.
function M.place(r)
  return M.lines_words(r.startLine, r.endLine) .. ' of ' .. one_line(r.path)
end

--- The hunks of a unified diff: where each header puts it, and in the file now (1-based) the first
--- and last lines it changed (`first` where it only removed lines: the line that now follows
--- them), its context left out, with how many lines it adds and removes.
function M.hunks(diff)
  local out, cur, at, changed = {}, nil, 0, false
  for _, line in ipairs(vim.split(diff or '', '\n', { plain = true })) do
    local a, c = line:match('^@@ %-(%d+),?%d* %+(%d+),?%d* @@')
    if a then
      at, changed = tonumber(c), false
      cur = { oldStart = tonumber(a), newStart = at, first = at, last = at, added = 0, removed = 0 }
      table.insert(out, cur)
    elseif cur and line:sub(1, 1) == '+' and line:sub(1, 3) ~= '+++' then
      if not changed then
        cur.first = at
      end
      changed = true
      cur.added = cur.added + 1
      cur.last = at
      at = at + 1
    elseif cur and line:sub(1, 1) == '-' and line:sub(1, 3) ~= '---' then
      if not changed then
        cur.first = at
      end
      if cur.added == 0 then
        cur.last = at
      end
      changed = true
      cur.removed = cur.removed + 1
    elseif cur and line:sub(1, 1) == ' ' then
      at = at + 1
    end
  end
  return out
end

--- A hunk in words: the lines it changed as they are now (or where it removed lines), and what
--- it did.
function M.hunk_words(h)
  local where = h.added == 0 and ('removed at line ' .. h.first) or M.lines_words(h.first, h.last)
  local what = {}
  if h.added > 0 then
    table.insert(what, '+' .. h.added)
  end
  if h.removed > 0 then
    table.insert(what, '-' .. h.removed)
  end
  return where .. (#what > 0 and ('  ' .. table.concat(what, ' ')) or '')
end

function M.is_reviewed(session_id, path, now)
  local marks = M.marks[session_id]
  return marks ~= nil and marks[path] ~= nil and marks[path] == (now == nil and ABSENT or now)
end

--- Each file of the last turn with its text now and its hunks, or nil and why not.
function M.files(state)
  local turn = M.turns[state.session_id]
  if not turn then
    return nil, 'no turn of this session changed a file yet'
  end
  local out = {}
  for _, path in ipairs(turn.files) do
    local result, err = client().call(rpc.CHECKPOINT_DIFF, { checkpointId = turn.checkpointId, path = path }, state)
    if not result then
      table.insert(out, { path = path, error = one_line(err), hunks = {} })
    else
      local now = result.now ~= vim.NIL and result.now or nil
      table.insert(out, { path = path, now = now, hunks = M.hunks(result.diff) })
    end
  end
  return out, turn
end

--- The quickfix items of `files`: one per hunk, at its first line now, saying whether the file is
--- reviewed; a file removed or unreadable is one item saying so.
function M.items(state, files)
  local items, reviewed = {}, 0
  for _, f in ipairs(files) do
    local done = f.error == nil and M.is_reviewed(state.session_id, f.path, f.now)
    if done then
      reviewed = reviewed + 1
    end
    local mark = done and '[reviewed] ' or '[not reviewed] '
    local filename = vim.fs.joinpath(state.root, f.path)
    if f.error then
      table.insert(items, { filename = filename, lnum = 1, text = mark .. 'cannot show: ' .. f.error })
    elseif f.now == nil then
      table.insert(items, { filename = filename, lnum = 1, text = mark .. 'removed by the turn' })
    else
      for _, h in ipairs(f.hunks) do
        table.insert(items, { filename = filename, lnum = math.max(1, h.first), text = mark .. M.hunk_words(h) })
      end
    end
  end
  return items, reviewed
end

--- :Bravebot review: the last turn's hunks in the quickfix list, opened.
function M.list(state, opts)
  state = state or client().ensure()
  if not state then
    return
  end
  local files, turn = M.files(state)
  if not files then
    return vim.notify('bravebot: ' .. turn .. ': nothing to review')
  end
  local items, reviewed = M.items(state, files)
  local title = string.format('bravebot review: checkpoint %s, %d of %d file%s reviewed (:Bravebot reviewed marks one)',
    one_line(turn.checkpointId), reviewed, #files, #files == 1 and '' or 's')
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if not (opts and opts.quiet) then
    -- Along the bottom of the whole screen, so the list and its title are not squeezed under a split.
    vim.cmd('botright copen')
  end
  return items, title
end

--- The workspace-relative path the cursor is on: the quickfix entry's file in the quickfix
--- window, else the current buffer's.
local function current_path(state)
  local name
  if vim.bo.buftype == 'quickfix' then
    local entry = vim.fn.getqflist()[vim.fn.line('.')]
    name = entry and entry.bufnr > 0 and vim.api.nvim_buf_get_name(entry.bufnr) or nil
  else
    name = vim.api.nvim_buf_get_name(0)
  end
  if not name or name == '' then
    return nil
  end
  local abs = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  local root = vim.fs.normalize(state.root)
  if not vim.startswith(abs, root .. '/') then
    return nil
  end
  return abs:sub(#root + 2)
end

--- :Bravebot reviewed / unreviewed: mark the file under the cursor, then redraw the list.
function M.mark(state, reviewed, path)
  state = state or client().ensure()
  if not state then
    return
  end
  path = path or current_path(state)
  local files, turn = M.files(state)
  if not files then
    return vim.notify('bravebot: ' .. turn, vim.log.levels.WARN)
  end
  local f
  for _, x in ipairs(files) do
    if x.path == path then
      f = x
    end
  end
  if not f then
    return vim.notify('bravebot: ' .. (path and (one_line(path) .. ' is not a file the last turn changed')
      or 'put the cursor on a file the last turn changed'), vim.log.levels.WARN)
  end
  M.marks[state.session_id] = M.marks[state.session_id] or {}
  M.marks[state.session_id][f.path] = reviewed and (f.now == nil and ABSENT or f.now) or nil
  vim.notify(string.format('bravebot: %s %s', one_line(f.path), reviewed and 'reviewed' or 'not reviewed'))
  local qf = vim.fn.getqflist({ title = 1 })
  if vim.startswith(qf.title or '', 'bravebot review:') then
    local line = vim.bo.buftype == 'quickfix' and vim.fn.line('.') or nil
    M.list(state, { quiet = true })
    if line then
      pcall(vim.api.nvim_win_set_cursor, 0, { line, 0 })
    end
  end
end

--- :Bravebot review diff: the file under the cursor against the checkpoint before the turn.
function M.diff(state, path)
  state = state or client().ensure()
  if not state then
    return
  end
  local turn = M.turns[state.session_id]
  if not turn then
    return vim.notify('bravebot: no turn of this session changed a file yet', vim.log.levels.WARN)
  end
  path = path or current_path(state)
  if not path then
    return vim.notify('bravebot: put the cursor on a file the last turn changed', vim.log.levels.WARN)
  end
  return require('bravebot.checkpoints').diff(state, turn.checkpointId, path)
end

--- Send a comment now, or keep it for when the running turn ends (the server takes one turn at a
--- time). The words are the person's; the range goes as a place only.
function M.send(state, text, range)
  if state.busy then
    M.queued[state.session_id] = M.queued[state.session_id] or {}
    table.insert(M.queued[state.session_id], { text = text, ranges = { range } })
    require('bravebot.chat').note_to(state, state.session_id,
      'your comment on ' .. M.place(range) .. ' goes once the running turn ends')
    return 'queued'
  end
  return client().prompt(text, nil, nil, nil, { range }) and 'sent' or 'refused'
end

--- The running turn ended: the first comment waiting goes.
function M.drain(state)
  local q = state and state.session_id and M.queued[state.session_id]
  if not q or #q == 0 or state.busy then
    return
  end
  local c = table.remove(q, 1)
  client().prompt(c.text, nil, nil, nil, c.ranges)
end

--- The range of a comment: lines `first`-`last` of the current buffer, as a workspace-relative
--- place; nil and why for a buffer that is no file of the workspace.
function M.range_of(state, first, last)
  local name = vim.api.nvim_buf_get_name(0)
  if vim.bo.buftype ~= '' or name == '' then
    return nil, 'comment on lines of a file'
  end
  local abs = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  local root = vim.fs.normalize(state.root)
  if not vim.startswith(abs, root .. '/') then
    return nil, 'comment on a file inside the workspace (' .. root .. ')'
  end
  if first > last then
    first, last = last, first
  end
  return { path = abs:sub(#root + 2), startLine = first, endLine = last }
end

--- :Bravebot comment on a range: `words` sent at once, or a float to type them in (Enter sends,
--- Esc or q closes without sending).
function M.comment(first, last, words)
  local state = client().ensure()
  if not state then
    return
  end
  local range, why = M.range_of(state, first, last)
  if not range then
    return vim.notify('bravebot: ' .. why, vim.log.levels.WARN)
  end
  if words and vim.trim(words) ~= '' then
    return M.send(state, vim.trim(words), range)
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  local width = math.min(80, vim.o.columns - 4)
  local title = ' bravebot: comment on ' .. M.place(range) .. ' (Enter sends, Esc closes) '
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = 3,
    row = math.floor((vim.o.lines - 3) / 3),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = vim.fn.strcharpart(title, 0, width),
  })
  vim.wo[win].wrap = true
  local function close()
    vim.cmd('stopinsert')
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  local function submit()
    local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
    close()
    if text == '' then
      return vim.notify('bravebot: the comment is empty, so nothing was sent')
    end
    M.send(state, text, range)
  end
  vim.keymap.set({ 'i', 'n' }, '<CR>', submit, { buffer = buf, desc = 'bravebot: send the comment' })
  vim.keymap.set('n', '<Esc>', close, { buffer = buf, desc = 'bravebot: close without sending' })
  vim.keymap.set('n', 'q', close, { buffer = buf, desc = 'bravebot: close without sending' })
  vim.cmd('startinsert')
  return buf, win
end

return M
