// The price table of `pixir usage` (archive.md §3): USD per million tokens, per model.
//
// Date: 2026-11-28. Sources (the providers' public price pages, as published on that date):
// - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("Base input tokens", "5m cache
//   writes", "1h cache writes", "Cache hits and refreshes", "Output tokens"). Sonnet 4.5 and Sonnet 4 list
//   a higher rate for prompts over 200k tokens and Haiku 5.5 one over 100k: only the base rate is here.
// - OpenAI: https://openai.com/api/pricing ("Input", "Cached input", "Output"). OpenAI charges no cache
//   write, so a written token is priced as input.
// - Google: https://ai.google.dev/gemini-api/docs/pricing ("Input", "Context caching", "Output"), the
//   rates for prompts up to 200k tokens; cache storage per hour is not a per-token price and is left out.
// A model name matches exactly, then by the longest listed prefix followed by `-`, `@` or `[` (a dated
// snapshot such as claude-sonnet-4-5-20250929, a `[1m]` variant). `pixir usage --prices FILE` replaces or
// extends a row; a model found nowhere is unpriced (cost null), never 0.

export interface ModelPrice {
  input: number;
  output: number;
  cache_read: number;
  cache_write_5m: number;
  cache_write_1h: number;
}

const anthropic = (input: number, output: number, cacheRead: number, write5m: number, write1h: number): ModelPrice => ({
  input,
  output,
  cache_read: cacheRead,
  cache_write_5m: write5m,
  cache_write_1h: write1h,
});
/** OpenAI and Google: no cache-write price, so a written token costs what input does. */
const flat = (input: number, output: number, cacheRead: number): ModelPrice => ({ input, output, cache_read: cacheRead, cache_write_5m: input, cache_write_1h: input });

export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = {
  // Anthropic
  "claude-fable-5-1": anthropic(10, 50, 0.25, 12.5, 20),
  "claude-fable-5": anthropic(10, 50, 1, 12.5, 20),
  "claude-opus-5-5": anthropic(4, 20, 0.2, 5, 8),
  "claude-opus-5": anthropic(5, 25, 0.5, 6.25, 10),
  "claude-opus-4-8": anthropic(5, 25, 0.5, 6.25, 10),
  "claude-opus-4-7": anthropic(5, 25, 0.5, 6.25, 10),
  "claude-opus-4-6": anthropic(5, 25, 0.5, 6.25, 10),
  "claude-opus-4-5": anthropic(5, 25, 0.5, 6.25, 10),
  "claude-opus-4-1": anthropic(15, 75, 1.5, 18.75, 30),
  "claude-opus-4": anthropic(15, 75, 1.5, 18.75, 30),
  "claude-3-opus": anthropic(15, 75, 1.5, 18.75, 30),
  "claude-sonnet-5-5": anthropic(2, 10, 0.1, 2.5, 4),
  "claude-sonnet-5": anthropic(2, 10, 0.2, 2.5, 4),
  "claude-sonnet-4-6": anthropic(3, 15, 0.3, 3.75, 6),
  "claude-sonnet-4-5": anthropic(3, 15, 0.3, 3.75, 6),
  "claude-sonnet-4": anthropic(3, 15, 0.3, 3.75, 6),
  "claude-3-7-sonnet": anthropic(3, 15, 0.3, 3.75, 6),
  "claude-3-5-sonnet": anthropic(3, 15, 0.3, 3.75, 6),
  "claude-haiku-5-5": anthropic(0.1, 0.5, 0.01, 0.125, 0.2),
  "claude-haiku-4-5": anthropic(1, 5, 0.1, 1.25, 2),
  "claude-3-5-haiku": anthropic(0.8, 4, 0.08, 1, 1.6),
  "claude-3-haiku": anthropic(0.25, 1.25, 0.03, 0.3, 0.5),
  // OpenAI
  "gpt-6-sol": flat(2, 10, 0.2),
  "gpt-6-luna": flat(0.1, 0.5, 0.01),
  "gpt-5.5": flat(5, 30, 0.5),
  "gpt-5.4": flat(2.5, 15, 0.25),
  "gpt-5.4-mini": flat(0.75, 4.5, 0.075),
  "gpt-5.4-nano": flat(0.2, 1.25, 0.02),
  "gpt-5.3-codex": flat(1.75, 14, 0.175),
  "gpt-5.2": flat(1.75, 14, 0.175),
  "gpt-5.2-codex": flat(1.75, 14, 0.175),
  "gpt-5.1": flat(1.25, 10, 0.125),
  "gpt-5.1-codex": flat(1.25, 10, 0.125),
  "gpt-5.1-codex-max": flat(1.25, 10, 0.125),
  "gpt-5.1-codex-mini": flat(0.25, 2, 0.025),
  "gpt-5": flat(1.25, 10, 0.125),
  "gpt-5-codex": flat(1.25, 10, 0.125),
  "gpt-5-mini": flat(0.25, 2, 0.025),
  "gpt-5-nano": flat(0.05, 0.4, 0.005),
  "gpt-4.1": flat(2, 8, 0.5),
  "gpt-4.1-mini": flat(0.4, 1.6, 0.1),
  "gpt-4o": flat(2.5, 10, 1.25),
  "gpt-4o-mini": flat(0.15, 0.6, 0.075),
  o3: flat(2, 8, 0.5),
  "o4-mini": flat(1.1, 4.4, 0.275),
  // Google
  "gemini-3-pro-preview": flat(2, 12, 0.2),
  "gemini-2.5-pro": flat(1.25, 10, 0.125),
  "gemini-2.5-flash": flat(0.3, 2.5, 0.03),
  "gemini-2.5-flash-lite": flat(0.1, 0.4, 0.01),
  "gemini-2.0-flash": flat(0.1, 0.4, 0.025),
};
