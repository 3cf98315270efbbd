/**
 * The fold profiles by name, the one place a profile name turns into behaviour: which policy decides
 * a request's commands, and which blocks keep the hot tail of the economic profiles (the ladder has
 * none: it keeps one tail of every kind). The adapter picks a profile from the `policy` setting; the
 * footer's tail figures ask the same table, so the two never disagree.
 */
import type { FoldCommand, PolicyView, ViewBlock } from "../contract.ts";
import { economize, isHot } from "./cache-economic.ts";
import { conduct } from "./fold-ladder.ts";
import { isHotOrWritten, workingSet } from "./working-set.ts";

/** One profile: its policy, and for an economic profile what keeps the hot tail. */
export interface Profile {
	decide: (view: PolicyView) => FoldCommand[];
	hot?: (block: ViewBlock) => boolean;
}

/** Every profile: `working-set` (the default), `economic` (its frugal peer) and `ladder` (the seed's). */
export const PROFILES = {
	"working-set": { decide: workingSet, hot: isHotOrWritten },
	economic: { decide: (view) => economize(view), hot: isHot },
	ladder: { decide: conduct },
} as const satisfies Record<string, Profile>;

/** A profile's name, as the `policy` setting gives it. */
export type ProfileName = keyof typeof PROFILES;
