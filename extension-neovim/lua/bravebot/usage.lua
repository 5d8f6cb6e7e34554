-- What the session's model calls cost (USAGE-4, NVIM-84): the meter the last `usage` update
-- carried, in the same words as VS Code's sidebar, for the chat's winbar, a statusline component
-- and :Bravebot usage. Counts are shown exactly as the endpoint reported them.
local M = {}

---@type table<string, table> the last meter each session's server sent, by session id
M.meters = {}

--- A count with its thousands grouped: 12345 -> "12,345".
function M.tokens(n)
  local s = string.format('%d', math.floor((tonumber(n) or 0) + 0.5))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- Dollars with enough places to show a small sum: "$0.0061", "$1.23".
function M.dollars(usd)
  if usd >= 1 then
    return string.format('$%.2f', usd)
  end
  local s = string.format('%.2g', usd)
  if s:find('e') then
    s = string.format('%.8f', usd):gsub('0+$', '')
  end
  return '$' .. s
end

local function reported_calls(t)
  return (tonumber(t.calls) or 0) - (tonumber(t.unreported) or 0)
end

local function in_out(t)
  if (t.calls or 0) > 0 and t.unreported == t.calls then
    return 'not reported by the endpoint'
  end
  local words = string.format('%s in · %s out', M.tokens(t.inputTokens), M.tokens(t.outputTokens))
  if (t.unreported or 0) > 0 then
    words = string.format('%s (%d of %d calls not reported)', words, t.unreported, t.calls)
  end
  return words
end

--- The money of these tallies: known only where each that reported anything had a price.
local function money(...)
  local sum, any = 0, false
  for _, t in ipairs({ ... }) do
    if reported_calls(t) > 0 then
      if type(t.costUsd) ~= 'number' then
        return nil
      end
      sum, any = sum + t.costUsd, true
    end
  end
  return any and sum or nil
end

--- ", compacted 2 times" where the conversation was compacted to fit its budget (MODEL-11).
local function compacted(m)
  local n = tonumber(m.compactions) or 0
  if n <= 0 then
    return ''
  end
  return string.format(', compacted %d %s', n, n == 1 and 'time' or 'times')
end

--- What the endpoint's prompt cache served and stored over these tallies, already counted in the
--- tokens in: "1,600 read · 300 written"; nil where it reported neither (USAGE-8).
local function cache_words(...)
  local read, written = 0, 0
  for _, t in ipairs({ ... }) do
    read = read + (tonumber(t.cachedInputTokens) or 0)
    written = written + (tonumber(t.cacheWriteInputTokens) or 0)
  end
  local parts = {}
  if read > 0 then
    table.insert(parts, M.tokens(read) .. ' read')
  end
  if written > 0 then
    table.insert(parts, M.tokens(written) .. ' written')
  end
  return #parts > 0 and table.concat(parts, ' · ') or nil
end

--- The meter as labelled lines: Context, Turn, Session, Cache where the endpoint's cache was
--- used, Protection, and Cost where priced.
function M.lines(m)
  local lines = {}
  local limit = tonumber(m.contextLimit)
  local s, p = m.session or {}, (m.session or {}).protection or {}
  local planner = s.planner or {}
  -- An endpoint that never reports usage gets one line saying so, not four.
  if (planner.calls or 0) > 0 and planner.calls == planner.unreported and (p.calls or 0) == (p.unreported or 0) then
    return { { 'Usage', 'not reported by the endpoint' .. (limit and (' (context limit ' .. M.tokens(limit) .. ')') or '') } }
  end
  if m.contextTokens ~= nil then
    local text = M.tokens(m.contextTokens)
    if limit and limit > 0 then
      text = string.format('%s of %s (%d%%)', text, M.tokens(limit), math.floor(100 * m.contextTokens / limit + 0.5))
    end
    table.insert(lines, { 'Context', text .. compacted(m) })
  elseif (planner.calls or 0) > 0 then
    table.insert(lines, { 'Context', 'not reported by the endpoint' .. (limit and (' (limit ' .. M.tokens(limit) .. ')') or '') })
  end
  table.insert(lines, { 'Turn', in_out(((m.turn or {}).planner) or {}) })
  table.insert(lines, { 'Session', in_out(planner) })
  local cache = cache_words(planner, p)
  if cache then
    table.insert(lines, { 'Cache', cache })
  end
  if (p.calls or 0) == 0 then
    table.insert(lines, { 'Protection', 'no checks or processors yet' })
  else
    table.insert(lines, { 'Protection', string.format('%d %s · %s', p.calls, p.calls == 1 and 'call' or 'calls', in_out(p)) })
  end
  local total = money(planner, p)
  if total then
    local text = string.format('≈ %s this session', M.dollars(total))
    local guard = money(p)
    if guard and reported_calls(p) > 0 then
      text = text .. string.format(', %s of it protection', M.dollars(guard))
    end
    table.insert(lines, { 'Cost', text })
  end
  return lines
end

--- The meter in one short line, for a winbar or a statusline: context, the turn's tokens,
--- protection's calls, money where known.
function M.short(m)
  if type(m) ~= 'table' then
    return ''
  end
  local planner, guard = (m.session or {}).planner or {}, (m.session or {}).protection or {}
  if (planner.calls or 0) > 0 and planner.calls == planner.unreported and (guard.calls or 0) == (guard.unreported or 0) then
    return 'usage not reported'
  end
  local parts = {}
  if m.contextTokens ~= nil then
    local limit = tonumber(m.contextLimit)
    table.insert(parts, 'ctx ' .. M.tokens(m.contextTokens) .. (limit and ('/' .. M.tokens(limit)) or ''))
  elseif (((m.session or {}).planner or {}).calls or 0) > 0 then
    table.insert(parts, 'ctx not reported')
  end
  local turn = (m.turn or {}).planner or {}
  if (turn.calls or 0) > 0 and turn.unreported == turn.calls then
    table.insert(parts, 'turn not reported')
  else
    table.insert(parts, string.format('turn %s in %s out', M.tokens(turn.inputTokens), M.tokens(turn.outputTokens)))
  end
  local p = (m.session or {}).protection or {}
  table.insert(parts, string.format('protection %d %s', p.calls or 0, p.calls == 1 and 'call' or 'calls'))
  local total = money(((m.session or {}).planner) or {}, p)
  if total then
    table.insert(parts, '≈' .. M.dollars(total))
  end
  return table.concat(parts, ' · ')
end

--- Keeps a `usage` update's meter for its session.
function M.on_update(session_id, update)
  if session_id and type(update.meter) == 'table' then
    M.meters[session_id] = update.meter
  end
end

--- A statusline component: the meter of the current directory's session, or '' before any call.
--- e.g. `vim.o.statusline = '%f %=%{v:lua.require("bravebot.usage").statusline()}'`.
function M.statusline()
  local ok, client = pcall(require, 'bravebot.client')
  if not ok then
    return ''
  end
  for _, state in pairs(client.states) do
    local m = state.session_id and M.meters[state.session_id]
    if m and vim.startswith(vim.fn.getcwd(), state.root) then
      return M.short(m)
    end
  end
  return ''
end

return M
