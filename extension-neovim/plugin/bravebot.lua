-- The :Bravebot command. Everything else loads lazily from lua/bravebot/ on first use.
if vim.g.loaded_bravebot then
  return
end
vim.g.loaded_bravebot = true

vim.api.nvim_create_user_command('Bravebot', function(args)
  require('bravebot.commands').run(args)
end, {
  nargs = '*',
  -- A range is read only by `comment`; every other subcommand ignores it.
  range = true,
  desc = 'bravebot: chat, ask, send, show, answer, cancel, mode, trust, add-dir, status, audit, log, new, checkpoints, restore, review, comment',
  complete = function(arglead, cmdline, cursorpos)
    return require('bravebot.commands').complete(arglead, cmdline, cursorpos)
  end,
})
