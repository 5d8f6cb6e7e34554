-- :checkhealth bravebot
local M = {}

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
