-- The :Bravebot subcommands and their completion.
local M = {}

local rpc = require('bravebot.protocol')

local function client()
  return require('bravebot.client')
end

local function show(title, value)
  local lines = { title }
  vim.list_extend(lines, vim.split(vim.inspect(value), '\n', { plain = true }))
  vim.api.nvim_echo({ { table.concat(lines, '\n') } }, true, {})
  return lines
end

--- Split `@path` words out of a prompt: the text is kept as typed, the paths are sent as files.
function M.parse_prompt(text)
  local files = {}
  for path in text:gmatch('@(%S+)') do
    table.insert(files, path)
  end
  return text, files
end

--- The floating prompt of :Bravebot ask. <CR> in normal mode or <C-s> sends, <Esc>/q closes.
function M.ask()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'bravebot_prompt'
  vim.bo[buf].omnifunc = "v:lua.require'bravebot.commands'.omnifunc"
  local width = math.min(80, vim.o.columns - 4)
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = 5,
    row = math.floor((vim.o.lines - 5) / 3),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' bravebot: ask (@path adds a file, <C-s> sends) ',
  })
  local function send()
    local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
    vim.api.nvim_win_close(win, true)
    vim.cmd('stopinsert')
    if vim.trim(text) ~= '' then
      local t, files = M.parse_prompt(text)
      client().prompt(t, files)
    end
  end
  vim.keymap.set({ 'n', 'i' }, '<C-s>', send, { buffer = buf, desc = 'bravebot: send' })
  vim.keymap.set('n', '<CR>', send, { buffer = buf, desc = 'bravebot: send' })
  vim.keymap.set('n', '<Esc>', function() vim.api.nvim_win_close(win, true) end, { buffer = buf })
  vim.keymap.set('n', 'q', function() vim.api.nvim_win_close(win, true) end, { buffer = buf })
  -- Typing @ offers files relative to the working directory.
  vim.keymap.set('i', '@', function()
    vim.schedule(function()
      if vim.fn.pumvisible() == 0 then
        vim.api.nvim_feedkeys(vim.keycode('<C-x><C-o>'), 'n', false)
      end
    end)
    return '@'
  end, { buffer = buf, expr = true })
  vim.cmd('startinsert')
  return buf, win
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
      return client().prompt(t, files)
    end
    M.ask()
  end,
  cancel = function()
    client().cancel()
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
    local _, err = client().call(rpc.TRUST, { path = vim.fn.fnamemodify(path, ':p'), scope = 'file' })
    vim.notify('bravebot: ' .. (err and ('trust refused: ' .. err) or ('trusted ' .. path)), err and vim.log.levels.ERROR or nil)
  end,
  ['add-dir'] = function(args)
    local dir = args[1] or vim.fn.getcwd()
    local _, err = client().call(rpc.TRUST, { path = vim.fn.fnamemodify(dir, ':p'), scope = 'directory' })
    vim.notify('bravebot: ' .. (err and ('add-dir refused: ' .. err) or ('added ' .. dir)), err and vim.log.levels.ERROR or nil)
  end,
  status = function()
    local result, err = client().call(rpc.STATUS, {})
    return show('bravebot status', result or err)
  end,
  audit = function()
    local result, err = client().call(rpc.AUDIT, {})
    return show('bravebot audit', result or err)
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
}

function M.run(args)
  local words = vim.deepcopy(args.fargs)
  local sub = table.remove(words, 1) or 'chat'
  local fn = M.subcommands[sub]
  if not fn then
    return vim.notify('bravebot: unknown subcommand ' .. sub, vim.log.levels.ERROR)
  end
  return fn(words)
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
  elseif sub == 'trust' then
    return vim.fn.getcompletion(arglead, 'file')
  elseif sub == 'add-dir' then
    return vim.fn.getcompletion(arglead, 'dir')
  end
  return {}
end

return M
