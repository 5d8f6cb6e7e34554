-- The bravebot/* methods of CONTRACT §3 as the plugin uses them: for each, whether it is a request
-- or a notification and which params fields the plugin may put in it. Every message the plugin
-- sends goes through this module, which refuses a method it does not list, the wrong kind and a
-- field the list does not name; tests/tests/protocol_fronts.rs checks the lists against
-- server/src/protocol.rs and server/src/lsp.rs, so the plugin and the server cannot drift apart.
-- Keep one entry a line: the Rust test reads this file as text.
local M = {}

--- Client → server.
M.outgoing = {
  ['bravebot/session/new'] = { kind = 'request', params = { 'cwd', 'incognito' } },
  ['bravebot/session/prompt'] = { kind = 'request', params = { 'sessionId', 'text', 'files', 'mentions', 'ranges' } },
  ['bravebot/session/cancel'] = { kind = 'notification', params = { 'sessionId' } },
  ['bravebot/session/status'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/session/audit'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/session/setMode'] = { kind = 'request', params = { 'sessionId', 'mode' } },
  ['bravebot/session/trust'] = { kind = 'request', params = { 'sessionId', 'path', 'scope', 'acknowledgeVerdict' } },
  ['bravebot/session/list'] = { kind = 'request', params = { 'cwd' } },
  ['bravebot/session/resume'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/session/delete'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/history/list'] = { kind = 'request', params = { 'limit' } },
  ['bravebot/session/loop'] = { kind = 'request', params = { 'sessionId', 'prompt', 'intervalSeconds' } },
  ['bravebot/session/loop/stop'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/session/end'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/session/show'] = { kind = 'request', params = { 'sessionId', 'ref' } },
  ['bravebot/question/texts'] = { kind = 'request', params = { 'questionId' } },
  ['bravebot/checkpoint/list'] = { kind = 'request', params = { 'sessionId' } },
  ['bravebot/checkpoint/diff'] = { kind = 'request', params = { 'sessionId', 'checkpointId', 'path' } },
  ['bravebot/checkpoint/restore'] = { kind = 'request', params = { 'sessionId', 'checkpointId' } },
  ['bravebot/vetting/set'] = { kind = 'request', params = { 'on' } },
}

--- Server → client: what handlers.lua answers.
M.incoming = {
  ['bravebot/session/update'] = { kind = 'notification' },
  ['bravebot/session/requestPermission'] = { kind = 'request' },
  ['bravebot/diagnostics/get'] = { kind = 'request' },
}

M.NEW = 'bravebot/session/new'
M.PROMPT = 'bravebot/session/prompt'
M.CANCEL = 'bravebot/session/cancel'
M.STATUS = 'bravebot/session/status'
M.AUDIT = 'bravebot/session/audit'
M.SET_MODE = 'bravebot/session/setMode'
M.TRUST = 'bravebot/session/trust'
M.SHOW = 'bravebot/session/show'
M.LIST = 'bravebot/session/list'
M.RESUME = 'bravebot/session/resume'
M.DELETE = 'bravebot/session/delete'
M.HISTORY = 'bravebot/history/list'
M.LOOP = 'bravebot/session/loop'
M.LOOP_STOP = 'bravebot/session/loop/stop'
M.END = 'bravebot/session/end'
M.QUESTION_TEXTS = 'bravebot/question/texts'
M.CHECKPOINT_LIST = 'bravebot/checkpoint/list'
M.CHECKPOINT_DIFF = 'bravebot/checkpoint/diff'
M.CHECKPOINT_RESTORE = 'bravebot/checkpoint/restore'
M.VETTING_SET = 'bravebot/vetting/set'
M.UPDATE = 'bravebot/session/update'
M.REQUEST_PERMISSION = 'bravebot/session/requestPermission'
M.DIAGNOSTICS_GET = 'bravebot/diagnostics/get'

local has_011 = vim.fn.has('nvim-0.11') == 1

--- Raises unless `method` is listed with `kind` and `params` holds only the fields it names.
function M.check(method, kind, params)
  local entry = M.outgoing[method]
  if not entry then
    error('bravebot: ' .. tostring(method) .. ' is not a method the plugin sends', 3)
  end
  if entry.kind ~= kind then
    error(string.format('bravebot: %s is a %s, not a %s', method, entry.kind, kind), 3)
  end
  for field in pairs(params or {}) do
    if not vim.tbl_contains(entry.params, field) then
      error(string.format('bravebot: %s has no field %s', method, tostring(field)), 3)
    end
  end
end

function M.request(client, method, params, handler)
  M.check(method, 'request', params)
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

function M.request_sync(client, method, params, timeout)
  M.check(method, 'request', params)
  if has_011 then
    return client:request_sync(method, params, timeout)
  end
  return client.request_sync(method, params, timeout)
end

function M.notify(client, method, params)
  M.check(method, 'notification', params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

return M
