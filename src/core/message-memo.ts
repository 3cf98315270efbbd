/**
 * A per-position memo of values derived from Pi messages. Pi hands every request a fresh deep copy
 * of the conversation, so identity cannot tell an unchanged message; instead the memo keeps a
 * private snapshot of each message it stored (a flat "tape" of its plain data, sharing the
 * immutable strings) and serves the stored value only when the new message is structurally equal to
 * that snapshot: the same plain objects with the same own keys in the same order, the same dense
 * arrays, and the same primitives (strings compared in full). A message holding anything else (a
 * class instance, a function, an array with holes, `undefined` elements or extra keys) is never
 * memoized, so a hit is exactly as good as recomputing from the message. A new message's arrays are
 * compared element by element: a named key set beside an array's elements is not looked for (that
 * would cost a list of its keys per array per request), as no reader of a message sees one: JSON and
 * every reader of messages here go by index, and a structured clone can hold no function.
 */

/** Marks an object on a tape: followed by its key count, then each key and its value's tape. */
const OBJECT = Object.freeze({ tape: "object" });
/** Marks an array on a tape: followed by its length, then each element's tape. */
const ARRAY = Object.freeze({ tape: "array" });

type Tape = unknown[];

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPlainObject(value: object): boolean {
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
}

/** True when `value` is an Array with no enumerable key other than its indexes and no hole. */
function isPlainArray(value: unknown[]): boolean {
	return Object.getPrototypeOf(value) === Array.prototype && Object.keys(value).length === value.length;
}

/** Appends the tape of `value`; false when it holds something the memo does not snapshot. */
function record(value: unknown, tape: Tape): boolean {
	if (value === null || (typeof value !== "object" && typeof value !== "function")) {
		tape.push(value);
		return true;
	}
	if (typeof value === "function") return false;
	if (Array.isArray(value)) {
		if (!isPlainArray(value) || value.includes(undefined)) return false;
		tape.push(ARRAY, value.length);
		for (const inner of value) if (!record(inner, tape)) return false;
		return true;
	}
	if (!isPlainObject(value)) return false;
	const keys = Object.keys(value);
	tape.push(OBJECT, keys.length);
	for (const key of keys) {
		tape.push(key);
		if (!record((value as Record<string, unknown>)[key], tape)) return false;
	}
	return true;
}

/**
 * True while Object.prototype has no enumerable key, so that `for...in` over a plain object lists
 * exactly its own enumerable keys, in the order Object.keys gives them.
 */
function cleanPrototype(): boolean {
	for (const _ in Object.prototype) return false;
	return true;
}

/** Compares `value` with the tape from `pos`; returns the position after it, or -1 on any difference. */
function match(value: unknown, tape: Tape, pos: number): number {
	const mark = tape[pos];
	if (mark === OBJECT) {
		if (value === null || typeof value !== "object" || Array.isArray(value) || !isPlainObject(value)) return -1;
		const count = tape[pos + 1] as number;
		let at = pos + 2;
		let seen = 0;
		for (const key in value) {
			if (seen++ === count || key !== tape[at]) return -1;
			const inner = (value as Record<string, unknown>)[key];
			if (inner !== null && typeof inner === "object") at = match(inner, tape, at + 1);
			else at = Object.is(inner, tape[at + 1]) ? at + 2 : -1;
			if (at < 0) return -1;
		}
		return seen === count ? at : -1;
	}
	if (mark === ARRAY) {
		if (!Array.isArray(value) || value.length !== tape[pos + 1] || Object.getPrototypeOf(value) !== Array.prototype)
			return -1;
		// A hole reads as undefined, which no snapshot holds as an element: it never matches.
		let at = pos + 2;
		for (let i = 0; i < value.length; i++) {
			const inner = value[i];
			if (inner !== null && typeof inner === "object") at = match(inner, tape, at);
			else at = Object.is(inner, tape[at]) ? at + 1 : -1;
			if (at < 0) return -1;
		}
		return at;
	}
	return Object.is(value, mark) ? pos + 1 : -1;
}

/** A private, exact record of a plain value (see the file comment); opaque outside this file. */
export type Snapshot = readonly unknown[];

/** A snapshot of `value`, or undefined when it holds something a snapshot cannot record exactly. */
export function snapshotOf(value: unknown): Snapshot | undefined {
	const tape: Tape = [];
	return record(value, tape) ? tape : undefined;
}

/** True when `value` is structurally equal to the value `snapshot` was taken of. */
export function matchesSnapshot(value: unknown, snapshot: Snapshot): boolean {
	return cleanPrototype() && match(value, snapshot as Tape, 0) === snapshot.length;
}

/**
 * A snapshot of only the listed fields of `message`, in the list's order; a field whose value is
 * undefined is left out. Undefined when a field's value cannot be recorded exactly.
 */
function fieldsSnapshotOf(message: Record<string, unknown>, fields: readonly string[]): Snapshot | undefined {
	const tape: Tape = [];
	for (const field of fields) {
		const value = message[field];
		if (value === undefined) continue;
		tape.push(field);
		if (!record(value, tape)) return undefined;
	}
	return tape;
}

/** True when the listed fields of `message` equal those `snapshot` recorded (see fieldsSnapshotOf). */
function matchesFields(message: Record<string, unknown>, fields: readonly string[], snapshot: Snapshot): boolean {
	if (!cleanPrototype()) return false;
	const tape = snapshot as Tape;
	let at = 0;
	for (const field of fields) {
		const value = message[field];
		if (value === undefined) continue;
		if (tape[at] !== field) return false;
		at = match(value, tape, at + 1);
		if (at < 0) return false;
	}
	return at === tape.length;
}

/**
 * Values derived from the message at each position, served while that message stays unchanged:
 * the whole message, or only the fields `fields` lists for it when the memo is made with such a
 * function. The list may depend only on fields it lists itself (such as a role): a new message is
 * compared on the stored message's list, and equal on it, it has the same list.
 */
export class MessageMemo<T> {
	// Parallel arrays by position, so a position's key is checked without loading an entry object.
	private keys: (number | undefined)[] = [];
	private snapshots: (Snapshot | undefined)[] = [];
	private lists: (readonly string[] | undefined)[] = [];
	private values: (T | undefined)[] = [];
	private readonly fields: ((message: Record<string, unknown>) => readonly string[]) | undefined;

	constructor(fields?: (message: Record<string, unknown>) => readonly string[]) {
		this.fields = fields;
	}

	/** The value stored for position `index` with `key`, if the message there is unchanged since. */
	get(index: number, message: unknown, key: number): T | undefined {
		if (this.keys[index] !== key) return undefined;
		const snapshot = this.snapshots[index] as Snapshot;
		const list = this.lists[index];
		const same = list
			? isRecord(message) && matchesFields(message, list, snapshot)
			: matchesSnapshot(message, snapshot);
		return same ? this.values[index] : undefined;
	}

	/** Stores `value` for position `index`; a message the memo cannot snapshot clears the position. */
	set(index: number, message: unknown, key: number, value: T): void {
		let list: readonly string[] | undefined;
		let snapshot: Snapshot | undefined;
		if (!this.fields) snapshot = snapshotOf(message);
		else if (isRecord(message)) {
			list = this.fields(message);
			snapshot = fieldsSnapshotOf(message, list);
		}
		if (!snapshot) {
			this.forget(index);
			return;
		}
		this.keys[index] = key;
		this.snapshots[index] = snapshot;
		this.lists[index] = list;
		this.values[index] = value;
	}

	/** Forgets position `index` (its message could not be memoized). */
	forget(index: number): void {
		this.keys[index] = undefined;
		this.snapshots[index] = undefined;
		this.lists[index] = undefined;
		this.values[index] = undefined;
	}

	/** Drops positions from `length` on (the conversation got shorter). */
	truncate(length: number): void {
		if (this.keys.length <= length) return;
		this.keys.length = length;
		this.snapshots.length = length;
		this.lists.length = length;
		this.values.length = length;
	}
}
