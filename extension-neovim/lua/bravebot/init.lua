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

--- The statusline component: "bravebot: 1 question" while questions wait, "bravebot: working"
--- while a turn runs, "" otherwise. Place it yourself, e.g.
--- `vim.o.statusline = "%f %= %{v:lua.require'bravebot'.statusline()}"`.
---@return string
function M.statusline()
  return require('bravebot.attention').statusline()
end

return M
