-- :checkhealth bravebot
local M = {}

--- The state directory (seed 003): ~/.bravebot, its permissions, its records and the history.
function M.check_state_dir()
  local health = vim.health
  local dir = vim.fs.normalize('~/.bravebot')
  local stat = vim.uv.fs_stat(dir)
  if not stat then
    health.ok('state directory ' .. dir .. ' does not exist yet: the first prompt of a session makes it (0700)')
    return
  end
  if stat.type ~= 'directory' then
    health.warn(dir .. ' is not a directory', { 'move it away: bravebot keeps its sessions and history there' })
    return
  end
  local mode = bit.band(stat.mode, 511)
  if mode == 448 then
    health.ok(string.format('state directory %s (permissions %o)', dir, mode))
  else
    health.warn(string.format('state directory %s has permissions %o, not 700: others can read your sessions', dir, mode),
      { 'chmod 700 ' .. dir })
  end
  local records = #vim.fn.glob(dir .. '/sessions/*/session.json', true, true)
  health.ok(string.format('%d session record%s in %s/sessions (:Bravebot sessions lists them)', records,
    records == 1 and '' or 's', dir))
  local history = dir .. '/history.jsonl'
  local hstat = vim.uv.fs_stat(history)
  if not hstat then
    health.ok('no prompt history yet (' .. history .. ')')
  else
    local hmode = bit.band(hstat.mode, 511)
    local lines = #vim.fn.readfile(history)
    if hmode == 384 then
      health.ok(string.format('prompt history %s: %d prompt%s (permissions %o)', history, lines, lines == 1 and '' or 's', hmode))
    else
      health.warn(string.format('prompt history %s has permissions %o, not 600', history, hmode), { 'chmod 600 ' .. history })
    end
  end
end

function M.check()
  local health = vim.health
  health.start('bravebot')
  local v = vim.version()
  local vs = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. vs .. ' (0.10 or newer is required)')
  else
    health.error('Neovim ' .. vs .. ' is too old: bravebot needs 0.10 or newer')
  end
  local config = require('bravebot.config')
  if not config.configured then
    health.info('setup() has not run yet (with lazy.nvim it runs on the first :Bravebot); checking the defaults')
  end
  M.check_state_dir()
  local cmd = config.options.cmd
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(exe .. ' not found', { 'install bravebot, or set cmd in require("bravebot").setup()' })
    return
  end
  health.ok('binary: ' .. vim.fn.exepath(exe))
  local res = vim.system({ exe, '--version' }, { text = true }):wait(5000)
  local out = vim.trim((res.stdout or '') .. (res.stdout == '' and res.stderr or ''))
  if res.code == 0 and out ~= '' then
    health.ok('version: ' .. out)
  else
    health.warn(exe .. ' --version failed (exit ' .. tostring(res.code) .. '): ' .. out)
  end
  local model = require('bravebot.config').options.model
  if model and model.apiKeyEnv then
    if vim.env[model.apiKeyEnv] and vim.env[model.apiKeyEnv] ~= '' then
      health.ok('API key: $' .. model.apiKeyEnv .. ' is set')
    else
      health.warn('API key: $' .. model.apiKeyEnv .. ' is not set')
    end
  end
  M.check_model(model)
end

--- The model the server resolves, as `bravebot/session/status` says: `{ api, baseUrl, name,
--- source }`, from the running session of this workspace if there is one, or else from a server
--- started here as the plugin starts it (the same command and `initializationOptions`), with an
--- incognito session that leaves nothing behind, and stopped again. Returns the model, the
--- session it came from ('running' or 'probe'), or nil and why not.
function M.server_model(model)
  local client = require('bravebot.client')
  local rpc = require('bravebot.protocol')
  local state = client.states[client.root()]
  local lsp = state and state.session_id and client.client_of(state)
  if lsp then
    local resp = rpc.request_sync(lsp, rpc.STATUS, { sessionId = state.session_id }, 10000)
    if resp and type(resp.result) == 'table' and type(resp.result.model) == 'table' then
      return resp.result.model, 'running'
    end
  end
  local config = require('bravebot.config')
  local init = { clientName = 'neovim' }
  if model then
    init.model = vim.deepcopy(model)
    -- The key is no part of which model answers: its command is not run for a health check.
    init.model.apiKeyCommand = nil
  end
  local ok, server = pcall(vim.lsp.rpc.start, config.options.cmd, {
    server_request = function()
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
    end,
  }, { cwd = vim.fn.getcwd() })
  if not ok or not server then
    return nil, 'the server did not start: ' .. tostring(server)
  end
  local result, err
  local function step(method, params, after)
    server.request(method, params, function(e, r)
      if e then
        err = method .. ': ' .. (type(e) == 'table' and tostring(e.message) or tostring(e))
        result = false
      else
        after(r)
      end
    end)
  end
  step('initialize', {
    processId = vim.uv.os_getpid(),
    rootUri = vim.uri_from_fname(vim.fn.getcwd()),
    capabilities = client.capabilities(),
    initializationOptions = init,
  }, function()
    server.notify('initialized', {})
    step(rpc.NEW, { incognito = true }, function(r)
      step(rpc.STATUS, { sessionId = r.sessionId }, function(status)
        result = type(status) == 'table' and status.model or false
        if not result then
          err = 'the status names no model'
        end
      end)
    end)
  end)
  vim.wait(10000, function() return result ~= nil end, 10)
  pcall(server.request, 'shutdown', nil, function()
    pcall(server.notify, 'exit', nil)
  end)
  vim.wait(2000, function() return server.is_closing() end, 10)
  pcall(server.terminate)
  if not result then
    return nil, err or 'the server did not answer in 10 s'
  end
  return result, 'probe'
end

--- Where the server's model came from, in words.
local SOURCES = {
  default = "bravebot's default (nothing set it)",
  ['~/.bravebot/settings.json'] = '~/.bravebot/settings.json',
  initializationOptions = 'setup() (the model option, passed to the server)',
  environment = 'the environment (BRAVEBOT_MODEL_URL, BRAVEBOT_MODEL or BRAVEBOT_MODEL_API), which overrides setup()',
}

--- Reports the model the server uses and where it came from, asking the server; says so when
--- setup() names another one.
function M.check_model(model)
  local health = vim.health
  local used, from = M.server_model(model)
  if not used then
    health.warn('model: could not ask the server which model it uses (' .. tostring(from) .. ')')
    return
  end
  local function s(v)
    return (v == nil or v == vim.NIL) and '?' or tostring(v)
  end
  health.ok(string.format('model: %s at %s (api %s), from %s%s', s(used.name), s(used.baseUrl), s(used.api),
    SOURCES[used.source] or s(used.source), from == 'running' and ', as the running session reports' or ', as the server reports'))
  if model and model.baseUrl and (model.baseUrl ~= used.baseUrl or (model.name and model.name ~= used.name)) then
    health.info(string.format('setup() names %s at %s, which the server does not use', s(model.name), s(model.baseUrl)))
  end
end

return M
