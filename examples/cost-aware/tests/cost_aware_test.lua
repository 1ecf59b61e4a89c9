-- `toolgate test examples/cost-aware`: with nothing spent yet (a test
-- has an empty usage ledger), costly tools go ahead; the specs drive the
-- budget past its levels.
return {
  { name = "a costly tool is allowed under budget", tool = "web_search", args = { q = "x" },
    expect = "allow", rule = false },
  { name = "other tools are not the budget's business", tool = "read_file",
    args = { path = "README.md" }, expect = "allow", rule = false },
}
