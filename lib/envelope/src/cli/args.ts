// The flags a command's implementation reads from its ParsedArgs, and cli.md §1's rule for integers.
// Apart from the runner (app.ts) so that the commands' modules do not load yargs.
import { usageError } from "../event/errors.js";
import type { ParsedArgs } from "./command.js";

/** cli.md §1: integers match ^\+?[0-9]+$ and lie in 0..2^53−1. */
export function parseNonNegativeInt(flag: string, value: string | undefined, synopsis: string, positive = false): number | undefined {
  if (value === undefined) return undefined;
  const rule = `--${flag} must be ${positive ? "a positive integer" : "a non-negative integer"}`;
  if (!/^\+?[0-9]+$/.test(value)) throw usageError(synopsis, rule);
  const n = Number(value.replace(/^\+/, ""));
  if (!Number.isSafeInteger(n) || (positive && n === 0)) throw usageError(synopsis, rule);
  return n;
}

export const stringFlag = (args: ParsedArgs, name: string): string | undefined => args.flags[name] as string | undefined;
export const boolFlag = (args: ParsedArgs, name: string): boolean => args.flags[name] === true;
export const listFlag = (args: ParsedArgs, name: string): string[] => (args.flags[name] as string[] | undefined) ?? [];

