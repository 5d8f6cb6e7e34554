-- One `bravebot lsp` client per workspace root, started with vim.lsp.start so Neovim's own LSP
-- client does buffer sync, workspace/applyEdit and code actions, and its session.
local config = require('bravebot.config')

local M = {}

---@class bravebot.State
---@field root string
---@field client_id integer
---@field session_id? string
---@field busy boolean

---@type table<string, bravebot.State> by root
M.states = {}
---@type table<integer, bravebot.State> by client id
M.by_client = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

local function request(client, method, params, handler)
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

local function request_sync(client, method, params, timeout)
  if has_011 then
    return client:request_sync(method, params, timeout)
  end
  return client.request_sync(method, params, timeout)
end

local function notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- The workspace root of a buffer: the nearest root marker, else the current directory.
---@param bufnr? integer
function M.root(bufnr)
  bufnr = bufnr or 0
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root
  if name ~= '' and vim.bo[bufnr].buftype == '' then
    root = vim.fs.root(bufnr, config.options.root_markers)
  end
  return vim.fs.normalize(root or vim.fn.getcwd())
end

local function under(path, root)
  return path == root or vim.startswith(path, root .. '/')
end

--- Attach every loaded file buffer under the root, so the server sees unsaved text.
local function attach_buffers(state)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    -- A buffer opened only to show a proposal for a file that was not open stays detached until
    -- the change has landed, so the server still writes that file on disk (WRITE-6).
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and not vim.b[b].bravebot_detached then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' and under(vim.fs.normalize(name), state.root) then
        vim.lsp.buf_attach_client(b, state.client_id)
      end
    end
  end
end

local group = vim.api.nvim_create_augroup('bravebot_attach', { clear = true })
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
  group = group,
  callback = function()
    for _, state in pairs(M.states) do
      if vim.lsp.get_client_by_id(state.client_id) then
        attach_buffers(state)
      end
    end
  end,
})

function M.attach_all()
  for _, state in pairs(M.states) do
    if vim.lsp.get_client_by_id(state.client_id) then
      attach_buffers(state)
    end
  end
end

function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.bravebot = { permissions = true }
  return caps
end

--- The state for `root`, starting the server and a session when there is none.
---@param root? string
---@return bravebot.State?
function M.ensure(root)
  root = root or M.root()
  local state = M.states[root]
  if state and vim.lsp.get_client_by_id(state.client_id) then
    return state
  end
  if vim.fn.executable(config.options.cmd[1]) ~= 1 then
    vim.notify('bravebot: ' .. config.options.cmd[1] .. ' is not executable (see :checkhealth bravebot)', vim.log.levels.ERROR)
    return nil
  end
  -- The server knows no `apiKeyCommand`: the key it yields goes into the server's environment.
  local model = config.options.model and vim.deepcopy(config.options.model) or nil
  local cmd_env = nil
  if model and model.apiKeyCommand then
    local result = vim.system(model.apiKeyCommand, { text = true }):wait()
    if result.code == 0 and vim.trim(result.stdout or '') ~= '' then
      cmd_env = { BRAVEBOT_API_KEY = vim.trim(result.stdout) }
    else
      vim.notify('bravebot: model.apiKeyCommand failed (exit ' .. tostring(result.code) .. '); starting without a key', vim.log.levels.WARN)
    end
    model.apiKeyCommand = nil
  end
  local lsp_config = {
    name = 'bravebot',
    cmd = config.options.cmd,
    cmd_env = cmd_env,
    root_dir = root,
    capabilities = M.capabilities(),
    init_options = { model = model, clientName = 'neovim' },
    handlers = require('bravebot.handlers').table(),
  }
  local id
  if has_011 then
    id = vim.lsp.start(lsp_config, { attach = false })
  else
    id = vim.lsp.start_client(lsp_config)
  end
  if not id then
    vim.notify('bravebot: the server did not start', vim.log.levels.ERROR)
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  vim.wait(10000, function()
    return client ~= nil and client.initialized == true
  end, 10)
  if not (client and client.initialized) then
    vim.notify('bravebot: the server did not initialize', vim.log.levels.ERROR)
    return nil
  end
  state = { root = root, client_id = id, busy = false }
  M.states[root] = state
  M.by_client[id] = state
  attach_buffers(state)
  if not M.new_session(state) then
    return nil
  end
  return state
end

function M.client_of(state)
  return vim.lsp.get_client_by_id(state.client_id)
end

--- Open a new session for the state; the old one is left to the server.
function M.new_session(state)
  local resp = request_sync(M.client_of(state), 'bravebot/session/new', { cwd = state.root }, 10000)
  if not resp or resp.err or not resp.result then
    vim.notify('bravebot: session/new failed: ' .. vim.inspect(resp and resp.err), vim.log.levels.ERROR)
    return false
  end
  state.session_id = resp.result.sessionId
  return true
end

--- A synchronous call with the session id added.
function M.call(method, params, state)
  state = state or M.ensure()
  if not state then
    return nil, 'no server'
  end
  params = vim.tbl_extend('force', { sessionId = state.session_id }, params or {})
  local resp = request_sync(M.client_of(state), method, params, 10000)
  if not resp then
    return nil, 'no answer'
  end
  if resp.err then
    return nil, resp.err.message or vim.inspect(resp.err)
  end
  return resp.result
end

--- Run one turn. Text streams into the chat buffer; `on_done(stopReason)` when it ends.
---@param text string
---@param files? string[]
---@param on_done? fun(stop_reason: string)
function M.prompt(text, files, on_done)
  local state = M.ensure()
  if not state then
    return false
  end
  attach_buffers(state)
  local chat = require('bravebot.chat')
  chat.open(state, { focus = false })
  chat.prompt(state, text, files)
  state.busy = true
  local params = { sessionId = state.session_id, text = text }
  if files and #files > 0 then
    params.files = files
  end
  request(M.client_of(state), 'bravebot/session/prompt', params, function(err, result)
    state.busy = false
    local reason = err and ('error: ' .. (err.message or '?')) or (result and result.stopReason) or '?'
    if result and result.error and result.error.message then
      reason = reason .. ': ' .. result.error.message
    end
    if err then
      chat.note(state, 'prompt failed: ' .. (err.message or vim.inspect(err)))
    end
    if on_done then
      on_done(reason)
    end
  end)
  return true
end

function M.cancel(state)
  state = state or M.states[M.root()]
  if not state then
    return
  end
  local client = M.client_of(state)
  if client then
    request(client, 'bravebot/session/cancel', { sessionId = state.session_id }, function() end)
  end
end

function M.stop_all()
  for root, state in pairs(M.states) do
    local client = M.client_of(state)
    if client then
      if has_011 then
        client:stop(true)
      else
        client.stop(true)
      end
    end
    M.states[root] = nil
    M.by_client[state.client_id] = nil
  end
end

M._notify = notify
return M
