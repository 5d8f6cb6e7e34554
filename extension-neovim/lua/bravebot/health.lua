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
  if model and model.baseUrl then
    health.ok(string.format('model: %s at %s (api %s), from setup()', tostring(model.name or '?'), model.baseUrl, tostring(model.api or 'openai')))
  elseif not (model and model.apiKeyEnv) then
    health.info('model: from bravebot settings (~/.bravebot/settings.json or environment)')
  end
end

return M
