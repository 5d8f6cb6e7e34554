-- The :Bravebot subcommands and their completion.
local M = {}

local rpc = require('bravebot.protocol')

local function client()
  return require('bravebot.client')
end

--- A value on one line: strings as they are, lists and tables as `name=value` pairs.
local function flat(v)
  if type(v) ~= 'table' then
    if v == nil or v == vim.NIL then
      return '-'
    end
    return (tostring(v):gsub('[\r\n]+', ' '))
  end
  if vim.islist(v) then
    return table.concat(vim.tbl_map(flat, v), ', ')
  end
  local names = vim.tbl_keys(v)
  table.sort(names)
  return table.concat(vim.tbl_map(function(n) return n .. '=' .. flat(v[n]) end, names), ', ')
end

--- The status as readable lines: one a field, a list's items each on its own line.
--- :Bravebot usage's lines: the meter `session/status` carried, label and words a line.
function M.usage_lines(meter)
  if type(meter) ~= 'table' then
    return { 'The server did not say.' }
  end
  local lines = {}
  for _, l in ipairs(require('bravebot.usage').lines(meter)) do
    table.insert(lines, string.format('%-11s %s', l[1], l[2]))
  end
  return lines
end

function M.status_lines(result)
  local lines = {}
  -- The delegates running first, in words (DELEG-60): what the person most often looks for.
  local running = vim.tbl_filter(function(d)
    return type(d) == 'table' and (d.state == 'running' or d.state == 'waiting')
  end, type(result.delegates) == 'table' and result.delegates or {})
  if #running == 0 then
    table.insert(lines, 'delegates running: none')
  else
    table.insert(lines, 'delegates running:')
    for _, d in ipairs(running) do
      table.insert(lines, string.format('  delegate %s (%s), depth %s: %s', flat(d.number), flat(d.kind), flat(d.depth),
        d.state == 'waiting' and 'waiting on you' or 'running'))
    end
  end
  local names = vim.tbl_keys(result)
  table.sort(names)
  for _, name in ipairs(names) do
    local v = result[name]
    if type(v) == 'table' and vim.islist(v) then
      if #v == 0 then
        table.insert(lines, string.format('%-18s none', name))
      else
        table.insert(lines, name)
        for _, item in ipairs(v) do
          table.insert(lines, '  - ' .. flat(item))
        end
      end
    else
      table.insert(lines, string.format('%-18s %s', name, flat(v)))
    end
  end
  return lines
end

--- Each gate of the audit trail in words; a gate this plugin does not know is named as sent.
M.GATE_WORDS = {
  routing = "the agent's own arguments",
  promote = 'an argument the model proposed',
  file_read = 'reading a file',
  present = 'what the agent may see',
  trust = 'what is trusted',
  question = 'a question to you',
  check = 'a check of untrusted content',
  context = "the agent's context",
}
local DECISION_WORDS = { allowed = 'allowed', refused = 'refused', observed = 'noted' }

--- A gate's detail in plain words: labels said as words, a gate named in brackets in words, ⟨⟩
--- around arguments as quotes.
local function plain_detail(detail)
  local chat = require('bravebot.chat')
  return (flat(detail):gsub('%(([TU]),(%a+)%)', function(t, r) return '(' .. chat.label_short('(' .. t .. ',' .. r .. ')') .. ')' end)
    :gsub('%[([%a_]+)%]', function(g) return M.GATE_WORDS[g] and ('(' .. M.GATE_WORDS[g] .. ')') or nil end)
    :gsub('⟨', '“'):gsub('⟩', '”'))
end

--- The audit trail as readable lines: the time each decision was made, the decision and the
--- gate in words, the detail with labels in words; with `exact`, every field as the server sent it.
function M.audit_lines(result, exact)
  local lines = {}
  for _, r in ipairs(result.records or {}) do
    local at = type(r.at) == 'number' and os.date('%Y-%m-%d %H:%M:%S', math.floor(r.at / 1000)) or '-'
    if exact then
      table.insert(lines, string.format('%s  %-8s %-9s %s', at, flat(r.decision), flat(r.gate), flat(r.detail)))
    else
      table.insert(lines, string.format('%s  %-8s %s: %s', at, DECISION_WORDS[r.decision] or flat(r.decision),
        M.GATE_WORDS[r.gate] or flat(r.gate), plain_detail(r.detail)))
    end
  end
  if #lines == 0 then
    lines = { 'no gate decision yet' }
  end
  return lines
end

--- A scratch buffer named `name` holding `lines`, shown in a split; q closes it.
local function scratch(name, title, lines)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    pcall(vim.api.nvim_buf_set_name, buf, name)
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].filetype = 'bravebot_info'
  end
  local all = { title, '' }
  vim.list_extend(all, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, all)
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    win = vim.api.nvim_open_win(buf, true, { split = 'below', win = 0, height = math.min(#all, 15) })
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.keymap.set('n', 'q', function() pcall(vim.api.nvim_win_close, win, true) end, { buffer = buf, nowait = true })
  return all, buf
end

--- Split `@path` words out of a prompt: the text is kept as typed, the paths are sent as mentions.
function M.parse_prompt(text)
  return require('bravebot.prompt').parse(text)
end

--- The floating prompt of :Bravebot ask (lua/bravebot/prompt.lua).
function M.ask()
  return require('bravebot.prompt').float(require('bravebot.client').root())
end

function M.complete_files(prefix)
  return require('bravebot.prompt').complete_files(prefix)
end

--- Open a quarantined item's bytes for the person (`bravebot/session/show`, for the screen only).
function M.show(ref, state, session_id)
  state = state or client().ensure()
  if not state then
    return
  end
  local result, err = client().call(rpc.SHOW, { sessionId = session_id or state.session_id, ref = ref }, state)
  if not result then
    vim.notify('bravebot: cannot show ' .. tostring(ref) .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  return require('bravebot.chat').show_float(result)
end

--- A record's line in the picker: when it was last written, its title, its id.
--- A record of another directory says which.
function M.session_line(r, root)
  local when = type(r.updated) == 'number' and os.date('%Y-%m-%d %H:%M', r.updated) or '-'
  local line = string.format('%s  %s  (%s)', when, flat(r.title ~= '' and r.title or '(untitled)'), flat(r.sessionId))
  if root and type(r.cwd) == 'string' and vim.fs.normalize(r.cwd) ~= root then
    line = line .. ' in ' .. flat(r.cwd)
  end
  return line
end

--- Take up a recorded session in the workspace's state.
function M.resume(id, state)
  state = state or client().ensure()
  if not state then
    return
  end
  local result, err = client().resume(state, id)
  if not result then
    return vim.notify('bravebot: cannot resume ' .. tostring(id) .. ': ' .. tostring(err), vim.log.levels.ERROR)
  end
  -- The chat says what was resumed; a message here would stop the screen after a picker.
  require('bravebot.chat').open(state)
  return result
end

--- The float of a vouch for a file a check judged unsafe (NVIM-73): the verdict and the check's
--- reasons inside the untrusted margin, then "Trust anyway" and "Do not trust", the mark on the
--- one that does not trust. Only "Trust anyway" sends the acknowledgement; every other way out
--- (<Esc>, q, closing the window) trusts nothing.
function M.confirm_trust(abs, path, result)
  local chat = require('bravebot.chat')
  local questions = require('bravebot.questions')
  local lines = {
    'A check judged ' .. flat(result.path or path) .. ' ' .. flat(result.verdict or 'unsafe') .. '.',
    "The check's reasons (its own words, unverified):",
  }
  local hls = {}
  local text = type(result.verdictText) == 'string' and result.verdictText or ''
  if text == '' then
    text = '(the check gave no reasons)'
  end
  for _, l in ipairs(vim.split(text, '\n', { plain = true })) do
    table.insert(lines, chat.MARGIN .. l)
    table.insert(hls, { #lines - 1, 'BravebotUntrusted' })
  end
  table.insert(lines, '')
  table.insert(lines, 'Trust it anyway? The agent will then read it without a check for this session.')
  local function refused()
    vim.notify('bravebot: not trusted ' .. path)
  end
  local choices = {
    { label = 'Trust anyway', approving = true, fn = function()
      local _, err = client().call(rpc.TRUST, { path = abs, scope = 'file', acknowledgeVerdict = true })
      vim.notify('bravebot: ' .. (err and ('trust refused: ' .. err) or ('trusted ' .. path)), err and vim.log.levels.ERROR or nil)
    end },
    { label = 'Do not trust', approving = false, fn = refused },
  }
  return questions.float('bravebot: trust a file the check judged unsafe', lines, hls, choices, refused,
    { kind = 'trust', title = 'trust ' .. path, focus = true })
end

--- Delete a record, after the person confirms it by name.
function M.delete(r, state)
  vim.ui.select({ 'Keep it', 'Delete it' }, {
    prompt = 'Delete the record of "' .. flat(r.title) .. '" (' .. flat(r.sessionId) .. ') and its audit trail?',
  }, function(choice)
    if choice ~= 'Delete it' then
      return vim.notify('bravebot: kept ' .. flat(r.sessionId))
    end
    local _, err = client().call(rpc.DELETE, { sessionId = r.sessionId }, state)
    vim.notify('bravebot: ' .. (err and ('delete refused: ' .. err) or ('deleted ' .. flat(r.sessionId))), err and vim.log.levels.ERROR or nil)
  end)
end

--- The server's records, newest first, in a picker; `action` is 'resume' or 'delete'.
function M.sessions(action, state)
  state = state or client().ensure()
  if not state then
    return
  end
  local result, err = client().list_sessions(state)
  if not result then
    return vim.notify('bravebot: session list failed: ' .. tostring(err), vim.log.levels.ERROR)
  end
  for _, u in ipairs(result.unreadable or {}) do
    vim.notify('bravebot: a record cannot be read: ' .. flat(u.sessionId) .. ': ' .. flat(u.error), vim.log.levels.WARN)
  end
  local records = vim.tbl_filter(function(r) return r.sessionId ~= state.session_id end, result.sessions or {})
  if #records == 0 then
    return vim.notify('bravebot: no other session is recorded under ~/.bravebot/sessions')
  end
  vim.ui.select(records, {
    prompt = action == 'delete' and 'Delete which session?' or 'Resume which session? (:Bravebot sessions delete deletes one)',
    format_item = function(r) return M.session_line(r, state.root) end,
  }, function(r)
    if not r then
      return
    end
    if action == 'delete' then
      M.delete(r, state)
    else
      M.resume(r.sessionId, state)
    end
  end)
end

--- `5`, `90s`, `10m`, `1h` as seconds; nil for anything else.
function M.interval(word)
  local n, unit = tostring(word or ''):match('^(%d+)([smh]?)$')
  if not n then
    return nil
  end
  return tonumber(n) * ({ [''] = 1, s = 1, m = 60, h = 3600 })[unit]
end

--- Start a loop over `prompt` (`bravebot/session/loop`), every `seconds` or self-paced.
function M.loop(prompt, seconds, state)
  state = state or client().ensure()
  if not state then
    return
  end
  local chat = require('bravebot.chat')
  chat.open(state, { focus = false })
  local params = { prompt = prompt }
  if seconds then
    params.intervalSeconds = seconds
  end
  local sid = state.session_id
  chat.prompt(state, prompt)
  -- Marked before the request: its first tick's updates may come before its answer.
  chat.loops[sid] = { prompt = prompt, ticks = 0, waiting = true, self_paced = seconds == nil }
  local how = seconds and string.format('every %ds', seconds) or 'self-paced (each tick asks for the next)'
  chat.note(state, 'loop started, ' .. how .. ': the prompt above is sent again unchanged; :Bravebot loop stop stops it')
  local result, err = client().call(rpc.LOOP, params, state)
  if not result then
    chat.loops[sid] = nil
    chat.note(state, 'loop refused: ' .. tostring(err))
    return vim.notify('bravebot: loop refused: ' .. tostring(err), vim.log.levels.ERROR)
  end
  if result.intervalSeconds and result.intervalSeconds ~= seconds then
    -- Held between loop.minSeconds and an hour (LOOP-5).
    how = string.format('every %ds', result.intervalSeconds)
    chat.note(state, string.format('the server keeps the loop at every %ds (between loop.minSeconds and an hour)', result.intervalSeconds))
  end
  vim.notify('bravebot: loop ' .. how)
  return result
end

function M.loop_stop(state)
  state = state or client().ensure()
  if not state then
    return
  end
  local result, err = client().call(rpc.LOOP_STOP, {}, state)
  require('bravebot.chat').loops[state.session_id] = nil
  if not result then
    return vim.notify('bravebot: loop stop failed: ' .. tostring(err), vim.log.levels.ERROR)
  end
  local line = result.stopped
      and string.format('loop stopped after %d ticks, %d of them quiet', result.ticks or 0, result.quietTicks or 0)
    or 'no loop was running'
  require('bravebot.chat').note(state, line)
  vim.notify('bravebot: ' .. line)
  return result
end

M.subcommands = {
  chat = function()
    local state = client().ensure()
    if state then
      require('bravebot.chat').open(state)
    end
  end,
  ask = function(args)
    if #args > 0 then
      local t, files = M.parse_prompt(table.concat(args, ' '))
      return client().prompt(t, nil, nil, files)
    end
    M.ask()
  end,
  cancel = function()
    client().cancel()
  end,
  show = function(args)
    local ref = args[1]
    if ref then
      return M.show(ref)
    end
    local state = client().ensure()
    local c = state and require('bravebot.chat').chats[state.session_id]
    local refs = c and c.refs or {}
    if #refs == 0 then
      return vim.notify('bravebot: nothing of this session is quarantined')
    end
    vim.ui.select(refs, {
      prompt = 'Show which quarantined item?',
      format_item = function(r)
        return string.format('%s from %s (%s)', r.ref, (tostring(r.origin):gsub('[\r\n]+', ' ')),
          require('bravebot.chat').label_short(r.label))
      end,
    }, function(r)
      if r then
        M.show(r.ref, state)
      end
    end)
  end,
  send = function()
    local state = client().ensure()
    if state then
      local p = require('bravebot.prompt')
      p.send(p.buf(state.root), state.root)
    end
  end,
  answer = function()
    require('bravebot.questions').answer()
  end,
  mode = function(args)
    local mode = args[1]
    if not mode then
      return vim.notify('bravebot: :Bravebot mode ask|acceptEdits|plan', vim.log.levels.WARN)
    end
    local _, err = client().call(rpc.SET_MODE, { mode = mode })
    vim.notify('bravebot: ' .. (err and ('mode refused: ' .. err) or ('mode ' .. mode)), err and vim.log.levels.ERROR or nil)
  end,
  trust = function(args)
    local path = args[1] or vim.api.nvim_buf_get_name(0)
    if vim.fn.filereadable(path) ~= 1 then
      return vim.notify('bravebot: no file ' .. path .. ' to trust', vim.log.levels.ERROR)
    end
    local abs = vim.fn.fnamemodify(path, ':p')
    local result, err = client().call(rpc.TRUST, { path = abs, scope = 'file' })
    -- A file a check judged unsafe is not trusted yet: the server answers with the verdict, and
    -- only a yes to it sends the acknowledgement (NVIM-73, PROTO-29).
    if not err and type(result) == 'table' and result.trusted == false then
      return M.confirm_trust(abs, path, result)
    end
    vim.notify('bravebot: ' .. (err and ('trust refused: ' .. err) or ('trusted ' .. path)), err and vim.log.levels.ERROR or nil)
  end,
  ['add-dir'] = function(args)
    local dir = args[1] or vim.fn.getcwd()
    local _, err = client().call(rpc.TRUST, { path = vim.fn.fnamemodify(dir, ':p'), scope = 'directory' })
    vim.notify('bravebot: ' .. (err and ('add-dir refused: ' .. err) or ('added ' .. dir)), err and vim.log.levels.ERROR or nil)
  end,
  status = function()
    local state = client().ensure()
    local result, err = client().call(rpc.STATUS, {}, state)
    if not result then
      return vim.notify('bravebot: status failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
    return scratch('bravebot://status/' .. state.root, string.format('bravebot status of session %s, at %s (q closes)',
      state.session_id, os.date('%Y-%m-%d %H:%M:%S')), M.status_lines(result))
  end,
  usage = function()
    local state = client().ensure()
    local result, err = client().call(rpc.STATUS, {}, state)
    if not result then
      return vim.notify('bravebot: usage failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
    return scratch('bravebot://usage/' .. state.root, string.format('bravebot usage of session %s, as the model endpoint reported it (q closes)',
      state.session_id), M.usage_lines(result.usage))
  end,
  audit = function()
    local state = client().ensure()
    local result, err = client().call(rpc.AUDIT, {}, state)
    if not result then
      return vim.notify('bravebot: audit failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
    local title = string.format('bravebot audit of session %s: %d gate decisions (<Tab> %%s, q closes)',
      state.session_id, #(result.records or {}))
    local all, buf = scratch('bravebot://audit/' .. state.root, title:format('shows the exact form'), M.audit_lines(result))
    -- The exact form (the gates' and decisions' own names, the labels as written) one key away.
    local exact = false
    vim.keymap.set('n', '<Tab>', function()
      exact = not exact
      local lines = { title:format(exact and 'shows it in words' or 'shows the exact form'), '' }
      vim.list_extend(lines, M.audit_lines(result, exact))
      vim.bo[buf].modifiable = true
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      vim.bo[buf].modifiable = false
    end, { buffer = buf, nowait = true, desc = 'bravebot: the audit in words or in its exact form' })
    return all, buf
  end,
  log = function()
    vim.cmd('tabnew ' .. vim.fn.fnameescape(vim.lsp.get_log_path()))
  end,
  new = function()
    local state = client().ensure()
    if state and client().new_session(state) then
      require('bravebot.chat').note(state, 'new session ' .. state.session_id)
    end
  end,
  incognito = function()
    local state, started = client().ensure(nil, { incognito = true })
    if state and (started or client().new_session(state, { incognito = true })) then
      require('bravebot.chat').open(state)
      vim.notify('bravebot: incognito session ' .. state.session_id .. ': nothing is written under ~/.bravebot')
    end
  end,
  sessions = function(args)
    if args[1] ~= nil and args[1] ~= 'delete' then
      return vim.notify('bravebot: :Bravebot sessions [delete]', vim.log.levels.ERROR)
    end
    M.sessions(args[1] == 'delete' and 'delete' or 'resume')
  end,
  resume = function(args)
    if args[1] then
      return M.resume(args[1])
    end
    M.sessions('resume')
  end,
  loop = function(args)
    if args[1] == 'stop' and #args == 1 then
      return M.loop_stop()
    end
    local seconds = M.interval(args[1])
    local words = vim.list_slice(args, seconds and 2 or 1)
    if #words == 0 then
      return vim.notify('bravebot: :Bravebot loop [interval] <prompt>, or :Bravebot loop stop', vim.log.levels.ERROR)
    end
    M.loop(table.concat(words, ' '), seconds)
  end,
  checkpoints = function()
    require('bravebot.checkpoints').pick()
  end,
  -- Turns auto-vetting on or off (VET-24): the server records the choice in ~/.bravebot/vetting,
  -- so it holds over the settings key; off reaches every open session at once.
  vetting = function(args)
    local word = args[1]
    if #args ~= 1 or (word ~= 'on' and word ~= 'off') then
      return vim.notify('bravebot: :Bravebot vetting on|off', vim.log.levels.ERROR)
    end
    local state = client().ensure()
    if not state then
      return
    end
    local result, err = client().set_vetting(state, word == 'on')
    if not result then
      return vim.notify('bravebot: auto-vetting was not changed: ' .. tostring(err), vim.log.levels.ERROR)
    end
    vim.notify(string.format('bravebot: auto-vetting is %s, recorded in %s', result.on and 'on' or 'off', tostring(result.record)))
  end,
  restore = function(args)
    if not args[1] then
      -- Without an id, the picker: it says which files go back before restoring.
      return require('bravebot.checkpoints').pick()
    end
    require('bravebot.checkpoints').restore(nil, args[1])
  end,
  ['undo-restore'] = function()
    require('bravebot.checkpoints').undo_restore()
  end,
  review = function(args)
    if args[1] == 'diff' then
      return require('bravebot.review').diff(nil, args[2])
    elseif args[1] ~= nil then
      return vim.notify('bravebot: :Bravebot review [diff [path]]', vim.log.levels.ERROR)
    end
    require('bravebot.review').list()
  end,
  reviewed = function(args)
    require('bravebot.review').mark(nil, true, args[1])
  end,
  unreviewed = function(args)
    require('bravebot.review').mark(nil, false, args[1])
  end,
  -- On a range (`:'<,'>Bravebot comment`), or the cursor's line without one.
  comment = function(args, cmd)
    local first = cmd and cmd.range > 0 and cmd.line1 or vim.fn.line('.')
    local last = cmd and cmd.range > 0 and cmd.line2 or first
    require('bravebot.review').comment(first, last, #args > 0 and table.concat(args, ' ') or nil)
  end,
}

function M.run(args)
  local words = vim.deepcopy(args.fargs)
  local sub = table.remove(words, 1) or 'chat'
  local fn = M.subcommands[sub]
  if not fn then
    return vim.notify('bravebot: unknown subcommand ' .. sub, vim.log.levels.ERROR)
  end
  return fn(words, args)
end

function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local n = #words + (cmdline:match('%s$') and 1 or 0)
  if n <= 2 then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, names)
  end
  local sub = words[2]
  if sub == 'mode' then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'ask', 'acceptEdits', 'plan' })
  elseif sub == 'show' then
    local state = client().states[client().root()]
    local c = state and require('bravebot.chat').chats[state.session_id]
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end,
      vim.tbl_map(function(r) return r.ref end, c and c.refs or {}))
  elseif sub == 'vetting' and n == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'on', 'off' })
  elseif sub == 'sessions' and n == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'delete' })
  elseif sub == 'loop' and n == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'stop', '5m', '1h' })
  elseif sub == 'resume' and n == 3 then
    local state = client().states[client().root()]
    local result = state and client().client_of(state) and client().list_sessions(state)
    local ids = vim.tbl_map(function(r) return r.sessionId end, result and result.sessions or {})
    if not result then
      -- No server yet: the records' directories, which are named by their ids.
      for _, path in ipairs(vim.fn.glob(vim.fs.normalize('~/.bravebot/sessions') .. '/*/session.json', true, true)) do
        table.insert(ids, vim.fs.basename(vim.fs.dirname(path)))
      end
    end
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, ids)
  elseif sub == 'restore' and n == 3 then
    -- The checkpoints the chat named, newest first.
    local state = client().states[client().root()]
    local c = state and require('bravebot.chat').chats[state.session_id]
    local ids = {}
    for i = #(c and c.checkpoints or {}), 1, -1 do
      table.insert(ids, c.checkpoints[i])
    end
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, ids)
  elseif sub == 'review' and n == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'diff' })
  elseif (sub == 'reviewed' or sub == 'unreviewed') and n == 3 then
    local state = client().states[client().root()]
    local turn = state and require('bravebot.review').turns[state.session_id]
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, turn and turn.files or {})
  elseif sub == 'trust' then
    return vim.fn.getcompletion(arglead, 'file')
  elseif sub == 'add-dir' then
    return vim.fn.getcompletion(arglead, 'dir')
  end
  return {}
end

return M
