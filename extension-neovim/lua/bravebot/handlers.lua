-- The LSP handlers the plugin adds: bravebot/session/update, bravebot/session/requestPermission
-- and bravebot/diagnostics/get. A question is answered when the person decides: Neovim runs
-- server requests in a coroutine, so the handler yields until then.
local M = {}

local CANCELLED = { outcome = { outcome = 'cancelled' } }

local function state_of(ctx)
  return require('bravebot.client').by_client[ctx.client_id]
end

function M.update(_, params, ctx)
  local state = state_of(ctx)
  if state and params and params.update then
    -- Each update goes to the chat of the session that sent it, which after :Bravebot new is
    -- not the state's current one.
    require('bravebot.chat').on_update(state, params.update, params.sessionId)
    local kind = params.update.kind
    if kind == 'toolResult' then
      -- A question of that call answered some other way (a code action) is over: take it down.
      require('bravebot.questions').settle_call(params.sessionId, params.update.callId, params.update.status)
    end
    if kind == 'toolResult' or kind == 'turnEnded' then
      require('bravebot.questions').settle_detached()
    end
    if kind == 'questionClosed' then
      -- The server stopped waiting (the question timed out, say): take it down (ATTN-4).
      require('bravebot.questions').close_question(params.update.questionId)
    end
    if kind == 'turnEnded' and params.sessionId then
      -- The server refused whatever the turn still asked; take those questions off the screen.
      require('bravebot.questions').close_session(params.sessionId)
      -- The turn is over once it says so: the next prompt can go at once, without waiting for the
      -- reply to the one that started it (which follows in the same or the next read).
      if state.session_id == params.sessionId then
        state.busy = false
      end
      require('bravebot.attention').turn_ended(state, params.sessionId, params.update.stopReason)
    end
  end
end

--- Answer a question: `reply(nil)` refuses (cancelled); otherwise select `option` with extras.
local function make_reply(done)
  local answered = false
  return function(option, extra)
    if answered then
      return
    end
    answered = true
    if not option then
      done(CANCELLED)
      return
    end
    local outcome = { outcome = 'selected', optionId = option.optionId }
    for k, v in pairs(extra or {}) do
      outcome[k] = v
    end
    done({ outcome = outcome })
  end
end

--- Put a question to the person through the handler of its kind, and wait for the answer.
function M.request_permission(_, params, ctx)
  local kinds = require('bravebot.questions').kinds
  local handler = kinds[params.kind] or kinds._unknown
  local co = coroutine.running()
  local result
  local waiting = false
  local reply = make_reply(function(r)
    result = r
    if waiting then
      waiting = false
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  local ok, err = pcall(handler, params, reply, ctx)
  if not ok then
    vim.notify('bravebot: the ' .. tostring(params.kind) .. ' question failed: ' .. tostring(err), vim.log.levels.ERROR)
    reply(nil)
  end
  if result == nil then
    if not co or (coroutine.isyieldable and not coroutine.isyieldable()) then
      -- Nothing to wait in: refuse rather than block the editor.
      return CANCELLED
    end
    waiting = true
    coroutine.yield()
  end
  return result
end

--- vim.diagnostic's severities (1 error .. 4 hint) as the wire's words.
local SEVERITY = { 'error', 'warning', 'information', 'hint' }

--- Most diagnostics one answer carries; the server reads at most 1000 and keeps 200.
M.MAX_DIAGNOSTICS = 1000

--- The buffers to report on, each with its file URI: those of `uris` that are loaded, or every
--- loaded buffer holding a file when none are named.
local function diagnostic_buffers(uris)
  local out = {}
  if type(uris) == 'table' then
    for _, uri in ipairs(uris) do
      local ok, fname = pcall(vim.uri_to_fname, uri)
      local bufnr = ok and vim.fn.bufnr(fname) or -1
      if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
        out[#out + 1] = { bufnr, uri }
      end
    end
    return out
  end
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if vim.api.nvim_buf_is_loaded(bufnr) and name ~= '' and vim.bo[bufnr].buftype == '' then
      out[#out + 1] = { bufnr, vim.uri_from_fname(name) }
    end
  end
  return out
end

--- Answer bravebot/diagnostics/get (DIAG-5, NVIM-99): what vim.diagnostic holds now (every
--- language server's and linter's) for the files the server names, or for every file buffer.
--- The server labels each as the file it is about and confines the URI; this only reports.
function M.diagnostics_get(_, params)
  local items = {}
  for _, b in ipairs(diagnostic_buffers(params and params.uris)) do
    for _, d in ipairs(vim.diagnostic.get(b[1])) do
      if #items >= M.MAX_DIAGNOSTICS then
        return { items = items }
      end
      items[#items + 1] = {
        uri = b[2],
        range = {
          start = { line = d.lnum or 0, character = d.col or 0 },
          ['end'] = { line = d.end_lnum or d.lnum or 0, character = d.end_col or d.col or 0 },
        },
        severity = SEVERITY[d.severity] or 'information',
        source = d.source and tostring(d.source) or '',
        code = d.code ~= nil and tostring(d.code) or '',
        message = tostring(d.message or ''),
      }
    end
  end
  return { items = items }
end

function M.table()
  local rpc = require('bravebot.protocol')
  return {
    [rpc.UPDATE] = M.update,
    [rpc.REQUEST_PERMISSION] = M.request_permission,
    [rpc.DIAGNOSTICS_GET] = M.diagnostics_get,
  }
end

return M
