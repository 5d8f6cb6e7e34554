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
local rpc = require('bravebot.protocol')

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
  -- hunkTexts: edit and write questions carry each hunk's text instead of both whole texts,
  -- which are asked for only when needed (WRITE-61).
  -- diagnostics: the server may ask for vim.diagnostic's diagnostics (DIAG-5, NVIM-99).
  caps.experimental.bravebot = { permissions = true, hunkTexts = true, diagnostics = true }
  return caps
end

--- The whole `{ original, proposed }` of a question still waiting (`bravebot/question/texts`,
--- WRITE-61), or nil and why not.
function M.question_texts(session_id, question_id)
  local state = session_id and M.by_session[session_id]
  local client = state and M.client_of(state)
  if not client then
    return nil, 'no server for this session'
  end
  local resp, err = rpc.request_sync(client, rpc.QUESTION_TEXTS, { questionId = question_id }, 10000)
  if not resp then
    return nil, err or 'no answer'
  end
  if resp.err or type(resp.result) ~= 'table' then
    return nil, resp.err and resp.err.message or 'no result'
  end
  return resp.result
end

--- The state for `root`, starting the server and a session when there is none.
--- With `opts.incognito`, a server started here opens its first session incognito, so nothing
--- is made for a session nobody asked for.
---@param root? string
---@param opts? { incognito?: boolean }
---@return bravebot.State?, boolean? started
function M.ensure(root, opts)
  root = root or M.root()
  local state = M.states[root]
  if state and vim.lsp.get_client_by_id(state.client_id) then
    return state, false
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
    init_options = { model = model, clientName = 'neovim', questions = config.options.questions, vetting = config.options.vetting },
    handlers = require('bravebot.handlers').table(),
    -- Every change goes to the server at once, not 150 ms later: an edit the server applied
    -- through `workspace/applyEdit` is then told back before the reply, so what the server reads
    -- of the buffer next (the turn's checkpoint as the turn ends, the agent's next read) is the
    -- text the person sees.
    flags = { debounce_text_changes = 0 },
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
  require('bravebot.attention').watch()
  state = { root = root, client_id = id, busy = false }
  M.states[root] = state
  M.by_client[id] = state
  attach_buffers(state)
  M.map_answer()
  if not M.new_session(state, opts) then
    return nil
  end
  return state, true
end

--- The global mapping to the oldest waiting question, unless the key already does something.
function M.map_answer()
  local lhs = (config.options.keymaps or {}).answer
  if lhs and vim.fn.maparg(lhs, 'n') == '' then
    vim.keymap.set('n', lhs, function()
      require('bravebot.questions').answer()
    end, { desc = 'bravebot: go to the waiting question' })
  end
end

function M.client_of(state)
  return vim.lsp.get_client_by_id(state.client_id)
end

---@type table<string, bravebot.State> the state each session id belongs to, old sessions included
M.by_session = {}

---@type table<string, boolean> the sessions opened incognito (SESS-10), by id
M.incognito = {}

---@type table<string, { on: boolean, source: string }> auto-vetting in each session, by id, as the
--- server said when it opened and since (VET-23)
M.vetting = {}

--- Auto-vetting as a session opened with it: kept for the winbar, and said at the top of its chat
--- when on, before any turn (VET-23). A session asking as usual says nothing.
local function opened_with(state, vetting)
  if type(vetting) ~= 'table' then
    return
  end
  M.vetting[state.session_id] = { on = vetting.on == true, source = tostring(vetting.source) }
  if vetting.on == true then
    require('bravebot.chat').vetting(state, state.session_id, M.vetting[state.session_id], true)
  end
end

--- Turn auto-vetting on or off (`bravebot/vetting/set`, VET-24): the server records the choice in
--- ~/.bravebot/vetting and says so in each open session it reaches. Returns its answer, or nil and
--- the error.
function M.set_vetting(state, on)
  local resp = rpc.request_sync(M.client_of(state), rpc.VETTING_SET, { on = on }, 10000)
  if not resp then
    return nil, 'no answer'
  end
  if resp.err or not resp.result then
    return nil, resp.err and resp.err.message or 'no result'
  end
  return resp.result
end

--- Leave the state's current session: a turn still running is cancelled and its questions refused.
local function leave(state)
  local old = state.session_id
  if old and state.busy then
    M.cancel(state)
  end
  if old then
    require('bravebot.questions').close_session(old)
  end
  return old
end

--- Let the server free a session the state has left (`bravebot/session/end`, PROTO-26): its
--- record stays, so it can still be resumed, and nothing more is drawn for it.
local function let_go(state, old)
  if old and old ~= state.session_id then
    rpc.request(M.client_of(state), rpc.END, { sessionId = old }, function() end)
  end
end

--- Open a new session for the state. A turn still running in the old session is cancelled, its
--- questions refused, and whatever it still sends goes to its own chat buffer, never the new one.
--- With `opts.incognito` the session leaves nothing under ~/.bravebot (SESS-10).
---@param opts? { incognito?: boolean }
function M.new_session(state, opts)
  opts = opts or {}
  local old = leave(state)
  local params = { cwd = state.root }
  if opts.incognito then
    params.incognito = true
  end
  local resp = rpc.request_sync(M.client_of(state), rpc.NEW, params, 10000)
  if not resp or resp.err or not resp.result then
    vim.notify('bravebot: session/new failed: ' .. vim.inspect(resp and resp.err), vim.log.levels.ERROR)
    return false
  end
  state.session_id = resp.result.sessionId
  state.busy = false
  M.incognito[state.session_id] = opts.incognito == true or nil
  M.by_session[state.session_id] = state
  -- Before anything else is drawn in the new session's chat: the banner is its first line, then
  -- what the platform and the session confine (NVIM-116).
  opened_with(state, resp.result.autoVetting)
  local status = M.call(rpc.STATUS, { sessionId = state.session_id }, state)
  if type(status) == 'table' and type(status.confinement) == 'string' and status.confinement ~= '' then
    require('bravebot.chat').confinement(state, state.session_id, status.confinement)
  end
  if old then
    require('bravebot.chat').replace(state, old)
  end
  let_go(state, old)
  return true
end

--- Take up a recorded session (`bravebot/session/resume`): it becomes the state's current one and
--- its transcript is drawn into its chat. Returns the server's answer, or nil and the error.
function M.resume(state, session_id)
  local resp = rpc.request_sync(M.client_of(state), rpc.RESUME, { sessionId = session_id }, 10000)
  if not resp then
    return nil, 'no answer'
  end
  if resp.err or not resp.result then
    return nil, resp.err and resp.err.message or 'no result'
  end
  local old = leave(state)
  state.session_id = resp.result.sessionId
  state.busy = false
  M.by_session[state.session_id] = state
  if type(resp.result.autoVetting) == 'table' then
    M.vetting[state.session_id] = { on = resp.result.autoVetting.on == true, source = tostring(resp.result.autoVetting.source) }
  end
  require('bravebot.chat').resumed(state, old, resp.result)
  let_go(state, old)
  return resp.result
end

--- The records the server keeps, newest first (`bravebot/session/list`), or nil and the error.
function M.list_sessions(state)
  local resp = rpc.request_sync(M.client_of(state), rpc.LIST, {}, 10000)
  if not resp then
    return nil, 'no answer'
  end
  if resp.err or not resp.result then
    return nil, resp.err and resp.err.message or 'no result'
  end
  return resp.result
end

--- The prompt history across sessions, newest first (`bravebot/history/list`); {} when it fails.
function M.history(state, limit)
  local resp = rpc.request_sync(M.client_of(state), rpc.HISTORY, { limit = limit }, 10000)
  return resp and resp.result and resp.result.entries or {}
end

--- A synchronous call with the session id added.
function M.call(method, params, state)
  state = state or M.ensure()
  if not state then
    return nil, 'no server'
  end
  params = vim.tbl_extend('force', { sessionId = state.session_id }, params or {})
  local resp = rpc.request_sync(M.client_of(state), method, params, 10000)
  if not resp then
    return nil, 'no answer'
  end
  if resp.err then
    return nil, resp.err.message or vim.inspect(resp.err)
  end
  return resp.result
end

--- An asynchronous call with the session id added: `on_result(result, err)` runs when the server
--- answers. For a request during which the server may ask a question (a restore): a synchronous
--- wait would not take the person's keys, so the question could not be answered.
function M.call_async(method, params, state, on_result)
  local client = state and M.client_of(state)
  if not client then
    return on_result(nil, 'no server')
  end
  params = vim.tbl_extend('force', { sessionId = state.session_id }, params or {})
  rpc.request(client, method, params, function(err, result)
    if err then
      return on_result(nil, err.message or vim.inspect(err))
    end
    on_result(result)
  end)
end

--- What to tell the person when a turn ended in an error: the reason, and the settings that
--- choose the model endpoint (as `bravebot exec` says on its stderr).
local function report_error(state, session_id, message)
  local chat = require('bravebot.chat')
  local model = config.options.model or {}
  local status = M.call(rpc.STATUS, { sessionId = session_id }, state)
  local endpoint = status and status.model or {}
  local where = endpoint.source == 'initializationOptions' and 'model.baseUrl in require("bravebot").setup()'
    or endpoint.source == 'environment' and 'BRAVEBOT_MODEL_URL in the environment'
    or endpoint.source == '~/.bravebot/settings.json' and 'model.baseUrl in ~/.bravebot/settings.json'
    or 'nothing (the default endpoint)'
  local hint = {
    string.format('The model endpoint is %s (model %s, api %s), set by %s.',
      tostring(endpoint.baseUrl or model.baseUrl or '?'), tostring(endpoint.name or model.name or '?'),
      tostring(endpoint.api or model.api or '?'), where),
  }
  if endpoint.source == 'environment' then
    -- The environment wins over setup() and the settings file: advice to change those would
    -- change nothing.
    vim.list_extend(hint, {
      'The environment overrides setup() and ~/.bravebot/settings.json: to use another, change or',
      'unset BRAVEBOT_MODEL_URL (and BRAVEBOT_MODEL, BRAVEBOT_MODEL_API) where Neovim is started;',
    })
  else
    vim.list_extend(hint, {
      'To use another, set model.baseUrl (and model.name, model.api, model.apiKeyEnv) in',
      'require("bravebot").setup(), or model.baseUrl in ~/.bravebot/settings.json, or',
      'BRAVEBOT_MODEL_URL in the environment, which overrides both;',
    })
  end
  table.insert(hint, ':checkhealth bravebot checks the binary, the key and the model the server uses.')
  chat.error(state, session_id, message, hint)
  -- One screen line, so the notification never stops the screen at a hit-enter prompt: the
  -- whole reason is in the chat.
  local first = vim.split(message, '\n', { plain = true })[1] or message
  local tail = ' (see the chat)'
  local head = 'bravebot: the model failed: '
  local room = math.max(20, vim.v.echospace - 1 - #head - #tail)
  if vim.fn.strdisplaywidth(first) > room then
    first = vim.fn.strcharpart(first, 0, room - 1) .. '…'
  end
  vim.notify(head .. first .. tail, vim.log.levels.ERROR)
end

--- Run one turn. Text streams into the chat buffer; `on_done(stopReason)` when it ends.
---@param text string
---@param files? string[] files the person vouches for by naming them (trusted for the session)
---@param on_done? fun(stop_reason: string)
---@param mentions? string[] the `@path`s the person pointed at: told to the agent, vouching for nothing (PROTO-30)
---@param ranges? { path: string, startLine: integer, endLine: integer }[] the places a comment's
--- words are about: told to the agent by place, their lines read from the file (REVIEW-3)
function M.prompt(text, files, on_done, mentions, ranges)
  local state = M.ensure()
  if not state then
    return false
  end
  if state.busy then
    vim.notify('bravebot: a turn is still running (:Bravebot cancel stops it)', vim.log.levels.WARN)
    return false
  end
  attach_buffers(state)
  local chat = require('bravebot.chat')
  local session_id = state.session_id
  chat.open(state, { focus = false })
  chat.prompt(state, text, files, mentions, ranges)
  state.busy = true
  chat.thinking(state, session_id, true)
  local params = { sessionId = session_id, text = text }
  if files and #files > 0 then
    params.files = files
  end
  if mentions and #mentions > 0 then
    -- Pointing at a file tells the agent of it; the agent reads it through the check like any
    -- other. Vouching is `:Bravebot trust`, a gesture of its own.
    params.mentions = mentions
  end
  if ranges and #ranges > 0 then
    params.ranges = ranges
  end
  rpc.request(M.client_of(state), rpc.PROMPT, params, function(err, result)
    if state.session_id == session_id then
      state.busy = false
      -- A comment that waited for this turn goes now (REVIEW-5).
      vim.schedule(function() require('bravebot.review').drain(state) end)
    end
    chat.thinking(state, session_id, false)
    local reason = err and ('error: ' .. (err.message or '?')) or (result and result.stopReason) or '?'
    if err then
      chat.note_to(state, session_id, 'prompt failed: ' .. (err.message or vim.inspect(err)))
    elseif result and result.stopReason == 'error' then
      local message = result.error and result.error.message or 'no reason given'
      reason = reason .. ': ' .. message
      vim.schedule(function() report_error(state, session_id, message) end)
    end
    if on_done then
      on_done(reason)
    end
  end)
  return true
end

--- Stop the running turn: `bravebot/session/cancel` is a notification, so nothing answers it;
--- the turn's prompt request then ends with stopReason `cancelled`.
function M.cancel(state)
  state = state or M.states[M.root()]
  if not state or not state.session_id then
    vim.notify('bravebot: no session to cancel', vim.log.levels.WARN)
    return false
  end
  local client = M.client_of(state)
  if not client then
    return false
  end
  if not state.busy then
    vim.notify('bravebot: no turn is running')
  end
  rpc.notify(client, rpc.CANCEL, { sessionId = state.session_id })
  if state.busy then
    require('bravebot.chat').note(state, 'cancelling…')
  end
  return true
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
  M.by_session = {}
end

return M
