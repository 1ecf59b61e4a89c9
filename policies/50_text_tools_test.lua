-- Tests of the shipped Lua tools (50_text_tools.lua), run by `toolgate test
-- policies`. The tools do not run in a test: these check how calls of them
-- are judged and that their schema refuses bad args.
return {
  { name = "word_count is read-only, so allowed by default", tool = "word_count",
    args = { text = "two words" }, expect = "allow", rule = false },
  { name = "word_count needs its text", tool = "word_count", args = {},
    expect_error_code = "INVALID_ARGS" },
  { name = "word_count takes nothing else", tool = "word_count",
    args = { text = "x", extra = 1 }, expect_error_code = "INVALID_ARGS" },
}
