-- The plugin's options: defaults, and what setup() merged into them.
local M = {}

---@class bravebot.ModelOptions
---@field api? "openai"|"anthropic" The wire protocol of the endpoint.
---@field baseUrl? string The endpoint, e.g. "http://127.0.0.1:8080/v1".
---@field name? string The model's name.
---@field apiKeyEnv? string The name of the environment variable holding the API key. The key itself is never put in Lua: the server reads that variable.
---@field apiKeyCommand? string[] A command whose output is the API key (e.g. {"pass", "show", "openai"}). It runs when the server starts and the key goes only into the server's environment (BRAVEBOT_API_KEY), never into a Lua file.

---@class bravebot.Keymaps
---@field accept_hunk? string|false Accept the hunk under the cursor (buffer-local while an edit is pending).
---@field reject_hunk? string|false Reject the hunk under the cursor.
---@field accept_all? string|false Accept every hunk still undecided.
---@field reject_all? string|false Reject every hunk still undecided.
---@field next_hunk? string|false Jump to the next hunk.
---@field prev_hunk? string|false Jump to the previous hunk.
---@field diff? string|false Show the proposal in a :diffsplit.
---@field send? string|false Send the prompt, in the prompt area and the :Bravebot ask float (Normal and Insert mode).
---@field send_normal? string|false Send the prompt from Normal mode.
---@field history_prev? string|false The older prompt of the history (Insert mode: only while no completion menu shows).
---@field history_next? string|false The newer prompt of the history.
---@field show? string|false In the chat: open the quarantined item of the line under the cursor.
---@field answer? string|false Move to the oldest waiting question (a global normal-mode mapping, made only where the key is free).

---@class bravebot.Notify
---@field questions? boolean Notify each question with vim.notify (default true); the chat says it either way.
---@field turn_end? boolean Notify a turn's end when its chat is not on screen or Neovim has lost the focus (default true).

---@class bravebot.Questions
---@field timeoutSeconds? integer Refuse a question nobody answers within this many seconds (initializationOptions.questions; default: wait until answered).

---@class bravebot.Vetting
---@field timeoutSeconds? integer How long one check may take before it is inconclusive (initializationOptions.vetting; default: the server's own, 600).

---@class bravebot.Options
---@field cmd? string[] The server command (default {"bravebot", "lsp"}).
---@field model? bravebot.ModelOptions Passed to the server as initializationOptions.model.
---@field root_markers? string[] Files marking a workspace root (default {".git"}); the current directory otherwise.
---@field keymaps? bravebot.Keymaps|false false leaves every key unmapped (use the :Bravebot subcommands).
---@field chat_split? "vertical"|"horizontal" How :Bravebot chat opens its window.
---@field notify? bravebot.Notify Which moments are notified.
---@field questions? bravebot.Questions Passed to the server as initializationOptions.questions.
---@field vetting? bravebot.Vetting Passed to the server as initializationOptions.vetting.

---@type bravebot.Options
M.defaults = {
  cmd = { 'bravebot', 'lsp' },
  model = nil,
  root_markers = { '.git' },
  chat_split = 'vertical',
  notify = { questions = true, turn_end = true },
  keymaps = {
    accept_hunk = '<LocalLeader>a',
    reject_hunk = '<LocalLeader>r',
    accept_all = '<LocalLeader>A',
    reject_all = '<LocalLeader>R',
    next_hunk = ']h',
    prev_hunk = '[h',
    diff = '<LocalLeader>d',
    send = '<C-s>',
    send_normal = '<CR>',
    history_prev = '<C-p>',
    history_next = '<C-n>',
    answer = '<Leader>ba',
    show = '<CR>',
  },
}

---@type bravebot.Options
M.options = vim.deepcopy(M.defaults)

---@param opts? bravebot.Options
function M.set(opts)
  opts = opts or {}
  if opts.model and (opts.model.apiKey or opts.model.api_key) then
    vim.notify('bravebot: an API key is read only from an environment variable; set model.apiKeyEnv', vim.log.levels.WARN)
    opts = vim.deepcopy(opts)
    opts.model.apiKey, opts.model.api_key = nil, nil
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  M.configured = true
end

return M
