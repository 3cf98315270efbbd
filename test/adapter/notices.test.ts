/**
 * Notices (src/adapters/pi/ui/notices.ts) over a stub terminal UI: where a notice goes, once-only
 * degradations, and the standing widget that holds what a session's restore found.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Notices } from "../../src/adapters/pi/ui/notices.ts";

type Ui = ExtensionContext["ui"];

/** A stub UI recording notifications and widgets; `refuse` makes both throw. */
function stubUi(refuse = false) {
	const notified: string[] = [];
	const widgets = new Map<string, string[] | undefined>();
	const ui = {
		notify: (message: string) => {
			if (refuse) throw new Error("no UI");
			notified.push(message);
		},
		setWidget: (key: string, lines: string[] | undefined) => {
			if (refuse) throw new Error("no UI");
			widgets.set(key, lines);
		},
	} as unknown as Ui;
	return { ui, notified, widgets };
}

function sink() {
	const lines: string[] = [];
	return { lines, write: (message: string) => void lines.push(message) };
}

describe("Notices", () => {
	test("a notice goes to the attached UI, else to the sink", () => {
		const out = sink();
		const notices = new Notices(out.write);
		notices.warn("before any UI");
		const { ui, notified } = stubUi();
		notices.attach(ui);
		notices.warn("with a UI");
		notices.attach(undefined);
		notices.warn("after the UI left");
		assert.deepEqual(out.lines, ["before any UI", "after the UI left"]);
		assert.deepEqual(notified, ["with a UI"]);
	});

	test("a UI that refuses a notice is dropped: that notice and every later one reach the sink", () => {
		const out = sink();
		const notices = new Notices(out.write);
		notices.attach(stubUi(true).ui);
		notices.warn("one");
		notices.warn("two");
		assert.deepEqual(out.lines, ["one", "two"]);
	});

	test("warnOnce announces each distinct message once and lists it among the failures", () => {
		const out = sink();
		const notices = new Notices(out.write);
		notices.warnOnce("a");
		notices.warnOnce("a");
		notices.warnOnce("b");
		assert.deepEqual(out.lines, ["a", "b"]);
		assert.deepEqual([...notices.reported], ["a", "b"]);
	});

	test("a standing widget shows its lines and trailer until cleared; outside the UI it shows nothing", () => {
		const notices = new Notices(sink().write);
		const widget = notices.standing("k", "(trailer)");
		assert.equal(widget.show(["x"]), false, "no UI attached");
		const { ui, widgets } = stubUi();
		notices.attach(ui);
		assert.equal(widget.show(["x", "y"]), true);
		assert.deepEqual(widgets.get("k"), ["x", "y", "(trailer)"]);
		widget.clear();
		assert.equal(widgets.get("k"), undefined);
		assert.ok(widgets.has("k"), "cleared by setting the widget to undefined");
	});

	test("standOnce puts fresh messages in the widget, or announces them once each without a UI", () => {
		const out = sink();
		const notices = new Notices(out.write);
		const widget = notices.standing("k", "(t)");
		notices.standOnce(widget, ["p1", "p2"]);
		notices.standOnce(widget, ["p1"]);
		assert.deepEqual(out.lines, ["p1", "p2"], "no UI: once each, as notices");
		const { ui, widgets, notified } = stubUi();
		notices.attach(ui);
		notices.standOnce(widget, ["p2", "p3"]);
		assert.deepEqual(widgets.get("k"), ["p3", "(t)"], "only the message not announced before");
		assert.deepEqual(notified, []);
		assert.deepEqual([...notices.reported], ["p1", "p2", "p3"]);
	});
});
