-- bravebot for Neovim: setup() and the public entry points.
local M = {}

--- Configure the plugin. Calling it is optional; every option has a default.
---@param opts? bravebot.Options
function M.setup(opts)
  require('bravebot.config').set(opts)
end

--- Send a prompt to the workspace's session. `files` are trusted for the session first.
---@param text string
---@param files? string[]
function M.prompt(text, files)
  return require('bravebot.client').prompt(text, files)
end

return M
