-- Drives headless Neovim (0.7 and later) as a user would: open a manifest, start the language
-- server with the configuration docs/editors.md gives, wait for the conflict diagnostic, hover the
-- field, pick the quick fix from the code-action menu, and wait for the diagnostic to go away.
-- Every wait is on an observed state (vim.wait with a predicate). The outcome is written as JSON to
-- $KCH_RESULT; neovim.test.ts judges it.
local result = { steps = {} }

local function finish(err)
  if err then result.error = tostring(err) end
  local file = io.open(os.getenv('KCH_RESULT'), 'w')
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd('qall!')
end

local function step(name) table.insert(result.steps, name) end

local function conflicts(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = (d.user_data or {}).lsp or {}
    local code = d.code or lsp.code
    if d.source == 'kube-conflict-hints' and code == 'field-conflict' then table.insert(found, d) end
  end
  return found
end

-- The document version of the latest published diagnostics: the proof that an empty list is the
-- server's answer to the edited text, not the old answer not yet replaced.
local published_version = -1
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
  if params and params.version then published_version = params.version end
  return publish(err, params, ctx, config)
end

local function run()
  local timeout = tonumber(os.getenv('KCH_WAIT_MS')) or 60000
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('KCH_MANIFEST')))
  local bufnr = vim.api.nvim_get_current_buf()
  step('opened')

  -- The configuration of docs/editors.md for Neovim 0.7 (vim.lsp.start wraps these two calls in 0.8+).
  local client_id = vim.lsp.start_client({
    name = 'kube-conflict-hints',
    cmd = { os.getenv('KCH_NODE'), os.getenv('KCH_CLI'), 'lsp', '--stdio' },
    root_dir = vim.fn.fnamemodify(os.getenv('KCH_MANIFEST'), ':p:h'),
    settings = { kubeConflictHints = { context = os.getenv('KCH_CONTEXT') } },
  })
  if not client_id then error('the language server did not start') end
  vim.lsp.buf_attach_client(bufnr, client_id)
  step('started')

  if not vim.wait(timeout, function() return #conflicts(bufnr) > 0 end, 50) then
    error('no field-conflict diagnostic arrived; diagnostics: ' .. vim.inspect(vim.diagnostic.get(bufnr)))
  end
  local diagnostic = conflicts(bufnr)[1]
  result.diagnostic = { line = diagnostic.lnum, col = diagnostic.col, message = diagnostic.message }
  step('diagnosed')

  -- Hover on the contested key, as K would ask.
  vim.api.nvim_win_set_cursor(0, { diagnostic.lnum + 1, diagnostic.col })
  local client = vim.lsp.get_client_by_id(client_id)
  local answer = client.request_sync('textDocument/hover', vim.lsp.util.make_position_params(), timeout, bufnr)
  if not answer or answer.err then error('hover failed: ' .. vim.inspect(answer)) end
  local contents = answer.result and answer.result.contents or {}
  result.hover = type(contents) == 'table' and (contents.value or vim.inspect(contents)) or tostring(contents)
  step('hovered')

  -- The code-action menu: answer vim.ui.select with the fix a user would pick.
  local offered = {}
  local picked = false
  vim.ui.select = function(items, opts, on_choice)
    for index, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or vim.inspect(item)
      table.insert(offered, title)
      if not picked and title:find('^Remove %.spec%.replicas') then
        picked = true
        on_choice(item, index)
        return
      end
    end
    on_choice(nil, nil)
  end
  vim.lsp.buf.code_action()
  if not vim.wait(timeout, function() return picked end, 50) then
    error('the quick fix was not offered; offered: ' .. vim.inspect(offered))
  end
  result.offered = offered
  step('fixed')

  local edited = vim.lsp.util.buf_versions[bufnr]
  result.editedVersion = edited
  if not vim.wait(timeout, function() return published_version >= edited and #conflicts(bufnr) == 0 end, 50) then
    error('the conflict diagnostic stayed after the fix: ' .. vim.inspect(conflicts(bufnr)))
  end
  result.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  result.remaining = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(result.remaining, d.message) end
  step('cleared')
end

local ok, err = pcall(run)
finish(not ok and err or nil)
