-- Checkpoints (`bravebot/checkpoint/*`): the session's list in a picker, a file's diff between a
-- checkpoint and now in two scratch buffers in diff mode, a restore (said before it is done) with
-- its result in the chat, and the undo of the last restore. The server does the restoring: open
-- buffers go back through `workspace/applyEdit`, so `u` in them undoes it.
local M = {}

local rpc = require('bravebot.protocol')

local function client()
  return require('bravebot.client')
end

local function chat()
  return require('bravebot.chat')
end

---@type table<string, string> by session id: the checkpoint whose restore undoes the last restore
M.undo = {}
---@type table<string, string> by session id: the checkpoint a restore now running goes back to
M.restoring = {}

local function one_line(s)
  if s == nil or s == vim.NIL then
    return ''
  end
  return (tostring(s):gsub('[\r\n]+', ' '))
end

--- `paths` as words: "no file", "1 file: a.txt", "3 files: a.txt, b.txt, c.txt".
function M.files_words(paths)
  paths = type(paths) == 'table' and paths or {}
  if #paths == 0 then
    return 'no file'
  end
  return string.format('%d file%s: %s', #paths, #paths == 1 and '' or 's',
    table.concat(vim.tbl_map(one_line, paths), ', '))
end

--- A checkpoint's line in the picker: when it was made, what made it, the files, its id.
function M.line(cp)
  local when = type(cp.createdAt) == 'number' and os.date('%Y-%m-%d %H:%M:%S', math.floor(cp.createdAt)) or '-'
  -- The title is the turn's prompt, or the server's words for a restore ("restore to c1").
  local title = one_line(cp.title) ~= '' and one_line(cp.title) or '(no prompt)'
  local what = 'before "' .. title .. '"'
  if cp.kind ~= 'turn' and cp.kind ~= 'restore' then
    what = one_line(cp.kind) .. ' ' .. what
  end
  local changed = cp.kind == 'restore' and 'the restore changed ' or 'the turn changed '
  return string.format('%s  %s  %s%s  (%s)', when, what, changed, M.files_words(cp.files), one_line(cp.checkpointId))
end

--- The files a restore to `cp` puts back: what its turn changed and what every later one did
--- (`all` is the list, newest first). The server decides; this is what the person is told first.
function M.affected(cp, all)
  local seen, out = {}, {}
  for _, c in ipairs(all or { cp }) do
    for _, p in ipairs(type(c.files) == 'table' and c.files or {}) do
      if not seen[p] then
        seen[p] = true
        table.insert(out, p)
      end
    end
    if c.checkpointId == cp.checkpointId then
      break
    end
  end
  table.sort(out)
  return out
end

--- The session's checkpoints, newest first, or nil and the error.
function M.fetch(state)
  local result, err = client().call(rpc.CHECKPOINT_LIST, {}, state)
  if not result then
    return nil, err
  end
  return type(result.checkpoints) == 'table' and result.checkpoints or {}
end

local function split(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- A scratch buffer named `name` holding `text` (nil: empty), read-only, with `path`'s filetype.
local function side(name, text, path)
  local old = vim.fn.bufnr(name)
  if old ~= -1 then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text ~= nil and text ~= vim.NIL and split(text) or {})
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local ft = vim.filetype.match({ filename = path, buf = buf })
  if ft then
    vim.bo[buf].filetype = ft
  end
  return buf
end

--- A file's diff between a checkpoint and now (`bravebot/checkpoint/diff`), in a new tab: the
--- text at the checkpoint on the left, the text now on the right, both in diff mode; q closes the
--- tab. Returns the two buffers, or nil when the server refused.
function M.diff(state, checkpoint_id, path)
  local result, err = client().call(rpc.CHECKPOINT_DIFF, { checkpointId = checkpoint_id, path = path }, state)
  if not result then
    vim.notify('bravebot: no diff of ' .. one_line(path) .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  local shown = one_line(result.path or path)
  local absent = '(no text: the file did not exist, or is not text)'
  local then_buf = side('bravebot://checkpoint/' .. one_line(checkpoint_id) .. '/' .. shown, result['then'], shown)
  local now_buf = side('bravebot://now/' .. shown, result.now, shown)
  vim.cmd('tabnew')
  local scratch = vim.api.nvim_get_current_buf()
  local left = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(left, then_buf)
  if vim.api.nvim_buf_is_valid(scratch) and scratch ~= then_buf then
    pcall(vim.api.nvim_buf_delete, scratch, { force = true })
  end
  local right = vim.api.nvim_open_win(now_buf, false, { split = 'right', win = left })
  local function bar(text)
    return '%#BravebotPrompt#' .. text:gsub('%%', '%%%%') .. '%*%<'
  end
  vim.wo[left].winbar = bar(string.format('at checkpoint %s: %s%s', one_line(checkpoint_id), shown,
    (result['then'] == nil or result['then'] == vim.NIL) and (' ' .. absent) or ''))
  vim.wo[right].winbar = bar(string.format('now: %s%s (q closes)', shown,
    (result.now == nil or result.now == vim.NIL) and (' ' .. absent) or ''))
  for _, w in ipairs({ left, right }) do
    vim.api.nvim_win_call(w, function()
      vim.cmd('diffthis')
    end)
  end
  for _, b in ipairs({ then_buf, now_buf }) do
    vim.keymap.set('n', 'q', function()
      if #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd('tabclose')
      else
        pcall(vim.api.nvim_buf_delete, then_buf, { force = true })
        pcall(vim.api.nvim_buf_delete, now_buf, { force = true })
      end
    end, { buffer = b, nowait = true, desc = 'bravebot: close the diff' })
  end
  return then_buf, now_buf, result
end

--- The buffers under the root with no unsaved changes, by path: a restore that lands in one of
--- them through `workspace/applyEdit` is written, so the disk (what a run reads) matches it, as an
--- accepted edit is.
local function clean_buffers(root)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and not vim.bo[b].modified then
      local name = vim.fs.normalize(vim.api.nvim_buf_get_name(b))
      if name ~= '' and vim.startswith(name, root .. '/') then
        out[name] = b
      end
    end
  end
  return out
end

--- The lines a restore's result is told in: what went back, what was skipped and why, and how to
--- undo it.
function M.result_lines(checkpoint_id, result)
  local lines = {}
  local restored = type(result.restored) == 'table' and result.restored or {}
  local removed = type(result.removed) == 'table' and result.removed or {}
  local skipped = type(result.skipped) == 'table' and result.skipped or {}
  -- A file that did not exist then went back by being removed: it is not "back".
  local gone = {}
  for _, p in ipairs(removed) do
    gone[p] = true
  end
  local back = vim.tbl_filter(function(p)
    return not gone[p]
  end, restored)
  local said = {}
  if #back > 0 then
    table.insert(said, M.files_words(back) .. ' back')
  end
  if #removed > 0 then
    table.insert(said, 'removed ' .. M.files_words(removed) .. ' (not there then)')
  end
  table.insert(lines, string.format('restored to checkpoint %s: %s', one_line(checkpoint_id),
    #said == 0 and 'no file back' or table.concat(said, '; ')))
  for _, s in ipairs(skipped) do
    table.insert(lines, string.format('skipped %s: %s', one_line(s.path), one_line(s.reason)))
  end
  if result.undoCheckpointId ~= nil and result.undoCheckpointId ~= vim.NIL then
    table.insert(lines, string.format(':Bravebot undo-restore undoes it (checkpoint %s)', one_line(result.undoCheckpointId)))
  end
  return lines
end

--- Restore the workspace to `checkpoint_id` (`bravebot/checkpoint/restore`). The request is not
--- waited for: the server may ask about a file the person changed after the agent did, and the
--- person answers that question meanwhile. `on_done(result, err)` when the server answers.
function M.restore(state, checkpoint_id, on_done)
  on_done = on_done or function() end
  state = state or client().ensure()
  if not state then
    return on_done(nil, 'no server')
  end
  local sid = state.session_id
  if M.restoring[sid] then
    vim.notify('bravebot: a restore is still running', vim.log.levels.WARN)
    return on_done(nil, 'a restore is still running')
  end
  M.restoring[sid] = checkpoint_id
  local clean = clean_buffers(state.root)
  chat().note_to(state, sid, 'restoring checkpoint ' .. one_line(checkpoint_id) .. '…')
  client().call_async(rpc.CHECKPOINT_RESTORE, { checkpointId = checkpoint_id }, state, function(result, err)
    M.restoring[sid] = nil
    if not result then
      chat().note_to(state, sid, 'restore refused: ' .. one_line(err))
      vim.notify('bravebot: restore refused: ' .. one_line(err), vim.log.levels.ERROR)
      return on_done(nil, err)
    end
    if result.undoCheckpointId ~= nil and result.undoCheckpointId ~= vim.NIL then
      M.undo[sid] = result.undoCheckpointId
    end
    -- A buffer that had nothing unsaved and that the restore changed is written; one whose file
    -- the restore deleted is not (writing it would make the file again).
    for _, path in ipairs(type(result.restored) == 'table' and result.restored or {}) do
      local abs = vim.fs.normalize(vim.fs.joinpath(state.root, path))
      local b = clean[abs]
      if b and vim.api.nvim_buf_is_valid(b) and vim.bo[b].modified and vim.uv.fs_stat(abs) then
        vim.api.nvim_buf_call(b, function()
          vim.cmd('silent write')
        end)
      end
    end
    local lines = M.result_lines(checkpoint_id, result)
    for _, l in ipairs(lines) do
      chat().note_to(state, sid, l)
    end
    local skipped = type(result.skipped) == 'table' and #result.skipped or 0
    vim.notify('bravebot: ' .. lines[1] .. (skipped > 0 and string.format('; %d skipped (see the chat)', skipped) or ''))
    on_done(result)
  end)
end

--- Undo the session's last restore: restore the checkpoint that restore made.
function M.undo_restore(state, on_done)
  state = state or client().ensure()
  if not state then
    return
  end
  local id = M.undo[state.session_id]
  if not id then
    vim.notify('bravebot: no restore of this session to undo', vim.log.levels.WARN)
    return on_done and on_done(nil, 'no restore to undo')
  end
  return M.restore(state, id, function(result, err)
    if result then
      -- The undo is a restore too, with a checkpoint of its own: undoing it again redoes the restore.
      chat().note_to(state, state.session_id, 'the last restore is undone')
    end
    if on_done then
      on_done(result, err)
    end
  end)
end

--- Say which files go back, and restore only on "Restore them".
function M.confirm(state, cp, all)
  local files = M.affected(cp, all)
  local before = 'before "' .. one_line(cp.title) .. '"'
  local which = #files == 0 and 'No file is known to have changed since.'
    or ('These go back as they were then: ' .. table.concat(vim.tbl_map(one_line, files), ', ') .. '.')
  -- What did not exist then is deleted: said only when there is such a file.
  local removes = type(cp.removes) == 'table' and cp.removes or {}
  if #removes > 0 then
    which = which .. ' ' .. table.concat(vim.tbl_map(one_line, removes), ', ')
      .. (#removes == 1 and ' did not exist then, so it is deleted.' or ' did not exist then, so they are deleted.')
  end
  local prompt = string.format('Restore to checkpoint %s (%s)? %s You are asked about any file you changed after'
    .. ' the agent did; :Bravebot undo-restore undoes the restore.', one_line(cp.checkpointId), before, which)
  vim.ui.select({ 'Restore them', 'Keep everything as it is' }, { prompt = prompt }, function(choice)
    if choice ~= 'Restore them' then
      return vim.notify('bravebot: nothing restored')
    end
    M.restore(state, cp.checkpointId)
  end)
end

--- What can be done with one checkpoint: a diff of each file it puts back, Restore, and Undo
--- restore once a restore was done.
function M.actions(state, cp, all)
  local items = {}
  for _, path in ipairs(M.affected(cp, all)) do
    table.insert(items, { label = 'See the diff of ' .. one_line(path) .. ' (then and now)',
      fn = function() M.diff(state, cp.checkpointId, path) end })
  end
  table.insert(items, { label = 'Restore to this checkpoint…', fn = function() M.confirm(state, cp, all) end })
  if M.undo[state.session_id] then
    table.insert(items, { label = 'Undo the last restore', fn = function() M.undo_restore(state) end })
  end
  vim.ui.select(items, {
    prompt = M.line(cp),
    format_item = function(i) return i.label end,
  }, function(item)
    if item then
      item.fn()
    end
  end)
end

--- :Bravebot checkpoints: the session's checkpoints, newest first, in a picker.
function M.pick(state)
  state = state or client().ensure()
  if not state then
    return
  end
  local all, err = M.fetch(state)
  if not all then
    return vim.notify('bravebot: checkpoint list failed: ' .. tostring(err), vim.log.levels.ERROR)
  end
  if #all == 0 then
    return vim.notify('bravebot: no checkpoint yet in this session: one is kept before each turn')
  end
  vim.ui.select(all, {
    prompt = 'Which checkpoint? (newest first; the workspace as it was before that turn)',
    format_item = M.line,
  }, function(cp)
    if cp then
      M.actions(state, cp, all)
    end
  end)
end

return M
