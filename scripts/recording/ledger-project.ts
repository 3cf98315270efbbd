/**
 * The sandbox project of the long refactoring session: `ledger-service`, a TypeScript billing
 * library whose amounts are floating-point major units, to be migrated to integer minor units.
 * Everything is generated deterministically: thirteen large domain modules (money functions in an
 * old float version and a new minor-unit version, plus plenty of ordinary domain code so reading a
 * module is a large read), their tests (which already expect minor units, so they fail until the
 * module is migrated), a frozen legacy CSV exporter that prints a deprecation warning, a CLI, and the
 * files the agent writes during the session (the money helpers, a statement renderer).
 * The expected values in the tests are computed here with the same arithmetic as the new code.
 */

/** A field of a domain entity. */
interface Field {
	name: string;
	type: "string" | "number" | "date";
}

/** A domain entity of a module (ordinary code, not about money). */
interface Entity {
	name: string;
	prefix: string;
	fields: Field[];
	statuses: string[];
}

/** One migrated function: its old (float) and new (minor-unit) text and a test. */
export interface MoneyFunction {
	name: string;
	oldText: string;
	newText: string;
	/** Test body line(s) asserting the new behaviour. */
	test: string;
	/** Whether the test fails against the old text. */
	failsBefore: boolean;
}

/** A domain module of the project. */
export interface LedgerModule {
	/** File stem: `src/<name>.ts`, `test/<name>.test.ts`. */
	name: string;
	entity: string;
	money: MoneyFunction[];
	/** The module comment's paragraph on amounts, before and after the migration. */
	header: { oldText: string; newText: string };
	/** The import line the migration extends. */
	importLine: string;
	/** The import line after the migration. */
	newImportLine: string;
}

const f = (name: string, type: Field["type"]): Field => ({ name, type });

const MODULE_DEFS: { name: string; entity: string; entities: Entity[]; kinds: string[] }[] = [
	{
		name: "invoices",
		entity: "Invoice",
		kinds: ["lineTotal", "tax", "allocate", "format", "sum"],
		entities: [
			{
				name: "Invoice",
				prefix: "INV",
				fields: [f("customerId", "string"), f("issuedAt", "date"), f("dueAt", "date"), f("currency", "string")],
				statuses: ["draft", "open", "paid", "void", "uncollectible"],
			},
			{
				name: "CreditNote",
				prefix: "CN",
				fields: [f("invoiceId", "string"), f("reason", "string"), f("issuedAt", "date")],
				statuses: ["draft", "issued", "applied"],
			},
			{
				name: "Reminder",
				prefix: "REM",
				fields: [f("invoiceId", "string"), f("level", "number"), f("sentAt", "date")],
				statuses: ["scheduled", "sent", "cancelled"],
			},
		],
	},
	{
		name: "payments",
		entity: "Payment",
		kinds: ["convert", "allocate", "format", "sum", "fee"],
		entities: [
			{
				name: "Payment",
				prefix: "PAY",
				fields: [f("invoiceId", "string"), f("method", "string"), f("receivedAt", "date"), f("currency", "string")],
				statuses: ["pending", "succeeded", "failed", "refunded"],
			},
			{
				name: "Chargeback",
				prefix: "CB",
				fields: [f("paymentId", "string"), f("reasonCode", "string"), f("openedAt", "date")],
				statuses: ["open", "won", "lost"],
			},
			{
				name: "Mandate",
				prefix: "MD",
				fields: [f("customerId", "string"), f("iban", "string"), f("signedAt", "date")],
				statuses: ["active", "revoked", "expired"],
			},
		],
	},
	{
		name: "refunds",
		entity: "Refund",
		kinds: ["allocate", "tax", "format", "fee"],
		entities: [
			{
				name: "Refund",
				prefix: "RF",
				fields: [f("paymentId", "string"), f("requestedAt", "date"), f("reason", "string")],
				statuses: ["requested", "approved", "paid", "rejected"],
			},
			{
				name: "RefundBatch",
				prefix: "RB",
				fields: [f("createdAt", "date"), f("size", "number"), f("operator", "string")],
				statuses: ["open", "submitted", "settled"],
			},
			{
				name: "ReturnLabel",
				prefix: "RL",
				fields: [f("refundId", "string"), f("carrier", "string"), f("printedAt", "date")],
				statuses: ["created", "printed", "scanned"],
			},
		],
	},
	{
		name: "subscriptions",
		entity: "Subscription",
		kinds: ["lineTotal", "convert", "tax", "sum", "format"],
		entities: [
			{
				name: "Subscription",
				prefix: "SUB",
				fields: [f("customerId", "string"), f("planId", "string"), f("startedAt", "date"), f("seats", "number")],
				statuses: ["trialing", "active", "past_due", "cancelled"],
			},
			{
				name: "Plan",
				prefix: "PLN",
				fields: [f("name", "string"), f("interval", "string"), f("createdAt", "date")],
				statuses: ["active", "archived"],
			},
			{
				name: "UsageRecord",
				prefix: "USE",
				fields: [f("subscriptionId", "string"), f("quantity", "number"), f("recordedAt", "date")],
				statuses: ["recorded", "billed"],
			},
		],
	},
	{
		name: "discounts",
		entity: "Discount",
		kinds: ["fee", "allocate", "sum", "format"],
		entities: [
			{
				name: "Coupon",
				prefix: "CPN",
				fields: [f("code", "string"), f("percentOff", "number"), f("validUntil", "date")],
				statuses: ["active", "expired", "exhausted"],
			},
			{
				name: "Promotion",
				prefix: "PRM",
				fields: [f("couponId", "string"), f("audience", "string"), f("startsAt", "date")],
				statuses: ["scheduled", "running", "ended"],
			},
			{
				name: "Voucher",
				prefix: "VCH",
				fields: [f("customerId", "string"), f("issuedAt", "date"), f("uses", "number")],
				statuses: ["issued", "redeemed", "void"],
			},
		],
	},
	{
		name: "payouts",
		entity: "Payout",
		kinds: ["convert", "fee", "allocate", "format", "sum"],
		entities: [
			{
				name: "Payout",
				prefix: "PO",
				fields: [f("accountId", "string"), f("arrivalDate", "date"), f("currency", "string")],
				statuses: ["pending", "in_transit", "paid", "failed"],
			},
			{
				name: "BankAccount",
				prefix: "BA",
				fields: [f("holder", "string"), f("iban", "string"), f("verifiedAt", "date")],
				statuses: ["new", "verified", "errored"],
			},
			{
				name: "PayoutSchedule",
				prefix: "PS",
				fields: [f("accountId", "string"), f("delayDays", "number"), f("updatedAt", "date")],
				statuses: ["daily", "weekly", "manual"],
			},
		],
	},
	{
		name: "fees",
		entity: "Charge",
		kinds: ["fee", "tax", "sum", "format"],
		entities: [
			{
				name: "FeeRule",
				prefix: "FR",
				fields: [f("method", "string"), f("basisPoints", "number"), f("effectiveFrom", "date")],
				statuses: ["draft", "active", "retired"],
			},
			{
				name: "FeeInvoice",
				prefix: "FI",
				fields: [f("accountId", "string"), f("periodStart", "date"), f("periodEnd", "date")],
				statuses: ["open", "finalized"],
			},
			{
				name: "Waiver",
				prefix: "WV",
				fields: [f("feeRuleId", "string"), f("approvedBy", "string"), f("expiresAt", "date")],
				statuses: ["requested", "approved", "expired"],
			},
		],
	},
	{
		name: "transfers",
		entity: "Transfer",
		kinds: ["convert", "allocate", "fee", "format"],
		entities: [
			{
				name: "Transfer",
				prefix: "TR",
				fields: [f("fromAccount", "string"), f("toAccount", "string"), f("createdAt", "date")],
				statuses: ["created", "posted", "reversed"],
			},
			{
				name: "Reversal",
				prefix: "RV",
				fields: [f("transferId", "string"), f("reason", "string"), f("createdAt", "date")],
				statuses: ["pending", "posted"],
			},
			{
				name: "Hold",
				prefix: "HLD",
				fields: [f("accountId", "string"), f("releaseAt", "date"), f("note", "string")],
				statuses: ["active", "released"],
			},
		],
	},
	{
		name: "disputes",
		entity: "Dispute",
		kinds: ["tax", "sum", "allocate", "format"],
		entities: [
			{
				name: "Dispute",
				prefix: "DP",
				fields: [f("paymentId", "string"), f("openedAt", "date"), f("network", "string")],
				statuses: ["needs_response", "under_review", "won", "lost"],
			},
			{
				name: "Evidence",
				prefix: "EV",
				fields: [f("disputeId", "string"), f("kind", "string"), f("uploadedAt", "date")],
				statuses: ["draft", "submitted"],
			},
			{
				name: "Deadline",
				prefix: "DL",
				fields: [f("disputeId", "string"), f("dueAt", "date"), f("extensions", "number")],
				statuses: ["upcoming", "missed", "met"],
			},
		],
	},
	{
		name: "settlements",
		entity: "Settlement",
		kinds: ["sum", "convert", "fee", "allocate", "format"],
		entities: [
			{
				name: "Settlement",
				prefix: "ST",
				fields: [f("acquirer", "string"), f("settledAt", "date"), f("currency", "string")],
				statuses: ["expected", "received", "mismatched"],
			},
			{
				name: "BookingLine",
				prefix: "BL",
				fields: [f("settlementId", "string"), f("reference", "string"), f("bookedAt", "date")],
				statuses: ["unmatched", "matched"],
			},
			{
				name: "Adjustment",
				prefix: "ADJ",
				fields: [f("settlementId", "string"), f("reason", "string"), f("createdAt", "date")],
				statuses: ["proposed", "booked"],
			},
		],
	},
	{
		name: "quotes",
		entity: "Quote",
		kinds: ["lineTotal", "tax", "format", "allocate"],
		entities: [
			{
				name: "Quote",
				prefix: "QT",
				fields: [f("customerId", "string"), f("validUntil", "date"), f("currency", "string")],
				statuses: ["draft", "sent", "accepted", "expired"],
			},
			{
				name: "QuoteRevision",
				prefix: "QR",
				fields: [f("quoteId", "string"), f("revision", "number"), f("createdAt", "date")],
				statuses: ["draft", "final"],
			},
			{
				name: "Approval",
				prefix: "APR",
				fields: [f("quoteId", "string"), f("approver", "string"), f("decidedAt", "date")],
				statuses: ["pending", "approved", "rejected"],
			},
		],
	},
	{
		name: "orders",
		entity: "Order",
		kinds: ["lineTotal", "convert", "sum", "format", "fee"],
		entities: [
			{
				name: "Order",
				prefix: "ORD",
				fields: [f("customerId", "string"), f("placedAt", "date"), f("channel", "string")],
				statuses: ["placed", "fulfilled", "cancelled"],
			},
			{
				name: "Shipment",
				prefix: "SHP",
				fields: [f("orderId", "string"), f("carrier", "string"), f("shippedAt", "date")],
				statuses: ["label_created", "in_transit", "delivered"],
			},
			{
				name: "Backorder",
				prefix: "BO",
				fields: [f("orderId", "string"), f("sku", "string"), f("expectedAt", "date")],
				statuses: ["waiting", "released"],
			},
		],
	},
	{
		name: "credits",
		entity: "Credit",
		kinds: ["allocate", "sum", "tax", "format"],
		entities: [
			{
				name: "CreditGrant",
				prefix: "CG",
				fields: [f("customerId", "string"), f("grantedAt", "date"), f("expiresAt", "date")],
				statuses: ["active", "depleted", "expired"],
			},
			{
				name: "CreditUsage",
				prefix: "CU",
				fields: [f("grantId", "string"), f("invoiceId", "string"), f("usedAt", "date")],
				statuses: ["applied", "reverted"],
			},
			{
				name: "CreditPolicy",
				prefix: "CP",
				fields: [f("name", "string"), f("maxDays", "number"), f("updatedAt", "date")],
				statuses: ["draft", "active"],
			},
		],
	},
	{
		name: "wallets",
		entity: "Wallet",
		kinds: ["sum", "convert", "allocate", "format"],
		entities: [
			{
				name: "Wallet",
				prefix: "WL",
				fields: [f("customerId", "string"), f("currency", "string"), f("openedAt", "date")],
				statuses: ["open", "frozen", "closed"],
			},
			{
				name: "TopUp",
				prefix: "TU",
				fields: [f("walletId", "string"), f("method", "string"), f("createdAt", "date")],
				statuses: ["pending", "credited", "reversed"],
			},
			{
				name: "Freeze",
				prefix: "FZ",
				fields: [f("walletId", "string"), f("reason", "string"), f("frozenAt", "date")],
				statuses: ["active", "lifted"],
			},
		],
	},
	{
		name: "rewards",
		entity: "Reward",
		kinds: ["fee", "sum", "format", "tax"],
		entities: [
			{
				name: "RewardProgram",
				prefix: "RP",
				fields: [f("name", "string"), f("tierCount", "number"), f("launchedAt", "date")],
				statuses: ["draft", "live", "retired"],
			},
			{
				name: "Redemption",
				prefix: "RD",
				fields: [f("customerId", "string"), f("programId", "string"), f("redeemedAt", "date")],
				statuses: ["requested", "fulfilled", "cancelled"],
			},
			{
				name: "Tier",
				prefix: "TI",
				fields: [f("programId", "string"), f("threshold", "number"), f("updatedAt", "date")],
				statuses: ["active", "hidden"],
			},
		],
	},
	{
		name: "budgets",
		entity: "Budget",
		kinds: ["allocate", "lineTotal", "sum", "format"],
		entities: [
			{
				name: "Budget",
				prefix: "BG",
				fields: [f("department", "string"), f("periodStart", "date"), f("owner", "string")],
				statuses: ["planned", "approved", "closed"],
			},
			{
				name: "Commitment",
				prefix: "CM",
				fields: [f("budgetId", "string"), f("vendor", "string"), f("committedAt", "date")],
				statuses: ["open", "invoiced", "released"],
			},
			{
				name: "Forecast",
				prefix: "FC",
				fields: [f("budgetId", "string"), f("horizonMonths", "number"), f("createdAt", "date")],
				statuses: ["draft", "published"],
			},
		],
	},
];

const lower = (s: string) => s[0].toLowerCase() + s.slice(1);

/** Arithmetic of the new code, to compute test expectations. */
const applyRate = (amount: number, rate: number) => {
	const raw = amount * rate;
	return Math.sign(raw) * Math.round(Math.abs(raw));
};
const allocate = (amount: number, weights: number[]) => {
	const total = weights.reduce((a, b) => a + b, 0);
	const shares = weights.map((w) => Math.trunc((amount * w) / total));
	let rest = amount - shares.reduce((a, b) => a + b, 0);
	const order = weights
		.map((w, i) => ({ i, frac: Math.abs((amount * w) / total - shares[i]) }))
		.sort((a, b) => b.frac - a.frac || a.i - b.i);
	const step = Math.sign(rest);
	for (let k = 0; rest !== 0; k++) {
		shares[order[k % order.length].i] += step;
		rest -= step;
	}
	return shares;
};

function moneyFunction(kind: string, e: string, idx: number): MoneyFunction {
	const E = e;
	const l = lower(e);
	const v = (idx % 5) + 1;
	switch (kind) {
		case "lineTotal": {
			const lines = [
				{
					sku: `SKU-${100 + v}`,
					description: "Seat licence",
					unitPrice: 1999 + v * 101,
					quantity: 3,
					discountRate: 0.1,
				},
				{ sku: "SKU-200", description: "Onboarding", unitPrice: 250 * v, quantity: 4, discountRate: 0 },
				{ sku: "SKU-310", description: "Support hours", unitPrice: 1234, quantity: 1 + v, discountRate: 0.15 },
			];
			const oldValue =
				Math.round(lines.reduce((s, x) => s + x.unitPrice * x.quantity * (1 - x.discountRate), 0) * 100) / 100;
			const expected = lines.reduce((s, x) => s + applyRate(x.unitPrice * x.quantity, 1 - x.discountRate), 0);
			return {
				name: `${l}LineTotal`,
				oldText: `/**
 * Total of the ${l} lines after each line's discount, in major units (e.g. 12.5 is 12.50), rounded to
 * cents once at the end.
 */
export function ${l}LineTotal(lines: ${E}Line[]): number {
	let total = 0;
	for (const line of lines) {
		const gross = line.unitPrice * line.quantity;
		total += gross * (1 - line.discountRate);
	}
	return Math.round(total * 100) / 100;
}`,
				newText: `/**
 * Total of the ${l} lines after each line's discount, in integer minor units. Every line is rounded
 * half up on its own before summing (finance reconciles per line, not per document).
 */
export function ${l}LineTotal(lines: ${E}Line[]): Minor {
	let total = 0;
	for (const line of lines) {
		assertMinor(line.unitPrice, "unitPrice");
		total += applyRate(line.unitPrice * line.quantity, 1 - line.discountRate);
	}
	return total;
}`,
				test: `it("${l}LineTotal rounds each line in minor units", () => {
		const lines = ${JSON.stringify(lines)};
		assert.equal(${l}LineTotal(lines), ${expected});
	});`,
				failsBefore: oldValue !== expected,
			};
		}
		case "tax": {
			const amount = 1999 + v * 37;
			const rate = [0.075, 0.19, 0.081, 0.2, 0.055][idx % 5];
			const oldValue = Math.round(amount * (1 + rate) * 100) / 100;
			const expected = applyRate(amount, 1 + rate);
			return {
				name: `apply${E}Tax`,
				oldText: `/**
 * Adds tax at \`rate\` (0.19 is 19 %) to a net ${l} amount in major units, rounded to cents.
 */
export function apply${E}Tax(amount: number, rate: number): number {
	if (rate < 0 || rate > 1) throw new RangeError(\`tax rate out of range: \${rate}\`);
	return Math.round(amount * (1 + rate) * 100) / 100;
}`,
				newText: `/**
 * Adds tax at \`rate\` (0.19 is 19 %) to a net ${l} amount in integer minor units, rounded half up
 * to the minor unit.
 */
export function apply${E}Tax(amount: Minor, rate: number): Minor {
	if (rate < 0 || rate > 1) throw new RangeError(\`tax rate out of range: \${rate}\`);
	return applyRate(assertMinor(amount), 1 + rate);
}`,
				test: `it("apply${E}Tax returns minor units", () => {
		assert.equal(apply${E}Tax(${amount}, ${rate}), ${expected});
	});`,
				failsBefore: oldValue !== expected,
			};
		}
		case "allocate": {
			const amount = [1000, 10001, 999, 2500, 7777][idx % 5];
			const weights = [
				[1, 1, 1],
				[3, 2, 2],
				[1, 2],
				[1, 1, 1, 1, 3],
				[5, 3, 1],
			][idx % 5];
			const total = weights.reduce((a, b) => a + b, 0);
			const oldValue = weights.map((w) => Math.round(((amount * w) / total) * 100) / 100);
			const expected = allocate(amount, weights);
			return {
				name: `allocate${E}`,
				oldText: `/**
 * Splits a ${l} amount across \`weights\` proportionally, each share rounded to cents. The shares may
 * not add up to the amount exactly.
 */
export function allocate${E}(amount: number, weights: number[]): number[] {
	const total = weights.reduce((sum, w) => sum + w, 0);
	if (total <= 0) throw new RangeError("weights must add up to a positive number");
	return weights.map((w) => Math.round(((amount * w) / total) * 100) / 100);
}`,
				newText: `/**
 * Splits a ${l} amount in minor units across \`weights\` proportionally with the largest-remainder
 * method: the shares always add up to the amount exactly.
 */
export function allocate${E}(amount: Minor, weights: number[]): Minor[] {
	return allocateMinor(assertMinor(amount), weights);
}`,
				test: `it("allocate${E} splits without losing a cent", () => {
		const shares = allocate${E}(${amount}, ${JSON.stringify(weights)});
		assert.deepEqual(shares, ${JSON.stringify(expected)});
		assert.equal(shares.reduce((a, b) => a + b, 0), ${amount});
	});`,
				failsBefore: JSON.stringify(oldValue) !== JSON.stringify(expected),
			};
		}
		case "convert": {
			const amount = 1000 + v * 333;
			const rate = [1.0837, 0.8571, 1.2719, 0.9163, 156.31][idx % 5];
			const oldValue = Math.round(amount * rate * 100) / 100;
			const expected = applyRate(amount, rate);
			return {
				name: `convert${E}Amount`,
				oldText: `/**
 * Converts a ${l} amount (major units) into the settlement currency at \`rate\`, rounded to cents.
 */
export function convert${E}Amount(amount: number, rate: number): number {
	if (!(rate > 0)) throw new RangeError(\`invalid exchange rate: \${rate}\`);
	return Math.round(amount * rate * 100) / 100;
}`,
				newText: `/**
 * Converts a ${l} amount in minor units into the settlement currency at \`rate\` (minor units of the
 * target currency per minor unit of the source), rounded half up.
 */
export function convert${E}Amount(amount: Minor, rate: number): Minor {
	if (!(rate > 0)) throw new RangeError(\`invalid exchange rate: \${rate}\`);
	return applyRate(assertMinor(amount), rate);
}`,
				test: `it("convert${E}Amount converts minor units", () => {
		assert.equal(convert${E}Amount(${amount}, ${rate}), ${expected});
	});`,
				failsBefore: oldValue !== expected,
			};
		}
		case "format": {
			const amount = 123456 + v * 1001;
			const currency = ["EUR", "USD", "GBP", "CHF", "SEK"][idx % 5];
			const expected = `${(amount / 100).toFixed(2)} ${currency}`;
			return {
				name: `format${E}Amount`,
				oldText: `/**
 * Formats a ${l} amount (major units) for statements and e-mails: two decimals and the currency code.
 */
export function format${E}Amount(amount: number, currency: string): string {
	return \`\${amount.toFixed(2)} \${currency}\`;
}`,
				newText: `/**
 * Formats a ${l} amount in minor units for statements and e-mails: the currency's decimals and its
 * code (\`123456\` EUR is "1234.56 EUR").
 */
export function format${E}Amount(amount: Minor, currency: string): string {
	return formatMinor(assertMinor(amount), currency);
}`,
				test: `it("format${E}Amount prints major units from minor units", () => {
		assert.equal(format${E}Amount(${amount}, "${currency}"), "${expected}");
	});`,
				failsBefore: true,
			};
		}
		case "sum": {
			const amounts = [1050, 2025 + v, 99, 300 * v];
			const expected = amounts.reduce((a, b) => a + b, 0);
			return {
				name: `sum${E}Amounts`,
				oldText: `/**
 * Sum of the \`amount\` fields of ${l} items, rounded to cents.
 */
export function sum${E}Amounts(items: readonly { amount: number }[]): number {
	const total = items.reduce((sum, item) => sum + item.amount, 0);
	return Math.round(total * 100) / 100;
}`,
				newText: `/**
 * Sum of the \`amount\` fields (minor units) of ${l} items; throws on a non-integer amount.
 */
export function sum${E}Amounts(items: readonly { amount: Minor }[]): Minor {
	return sumMinor(items.map((item) => item.amount));
}`,
				test: `it("sum${E}Amounts adds minor units", () => {
		assert.equal(sum${E}Amounts(${JSON.stringify(amounts.map((amount) => ({ amount })))}), ${expected});
	});`,
				failsBefore: false,
			};
		}
		default: {
			const amount = 12345 + v * 111;
			const bp = [290, 149, 35, 250, 175][idx % 5];
			const oldValue = Math.round(((amount * bp) / 10000) * 100) / 100;
			const expected = applyRate(amount, bp / 10000);
			return {
				name: `${l}Fee`,
				oldText: `/**
 * The ${l} fee for \`amount\` (major units) at \`basisPoints\` (1 bp = 0.01 %), rounded to cents.
 */
export function ${l}Fee(amount: number, basisPoints: number): number {
	if (!Number.isInteger(basisPoints) || basisPoints < 0) throw new RangeError(\`invalid basis points: \${basisPoints}\`);
	return Math.round(((amount * basisPoints) / 10000) * 100) / 100;
}`,
				newText: `/**
 * The ${l} fee for \`amount\` (minor units) at \`basisPoints\` (1 bp = 0.01 %), rounded half up to
 * the minor unit.
 */
export function ${l}Fee(amount: Minor, basisPoints: number): Minor {
	if (!Number.isInteger(basisPoints) || basisPoints < 0) throw new RangeError(\`invalid basis points: \${basisPoints}\`);
	return applyRate(assertMinor(amount), basisPoints / 10000);
}`,
				test: `it("${l}Fee is computed in minor units", () => {
		assert.equal(${l}Fee(${amount}, ${bp}), ${expected});
	});`,
				failsBefore: oldValue !== expected,
			};
		}
	}
}

function tsType(field: Field): string {
	return field.type === "number" ? "number" : "string";
}

function entityCode(en: Entity, mod: string): string {
	const E = en.name;
	const l = lower(E);
	const status = `${E}Status`;
	const fieldLines = en.fields.map((fl) => `\t${fl.name}: ${tsType(fl)};`).join("\n");
	const checks = en.fields
		.map((fl) => {
			if (fl.type === "date") {
				return `\tif (input.${fl.name} === undefined || !isIsoDate(input.${fl.name})) {
		issues.push({ field: "${fl.name}", message: "expected an ISO date (YYYY-MM-DD)" });
	}`;
			}
			if (fl.type === "number") {
				return `\tif (input.${fl.name} === undefined || !Number.isFinite(input.${fl.name}) || input.${fl.name} < 0) {
		issues.push({ field: "${fl.name}", message: "expected a non-negative number" });
	}`;
			}
			return `\tif (!input.${fl.name} || input.${fl.name}.trim() === "") {
		issues.push({ field: "${fl.name}", message: "must not be empty" });
	}`;
		})
		.join("\n");
	const parseFields = en.fields
		.map((fl, i) => {
			const raw = `parts[${i + 2}]`;
			if (fl.type === "number") return `\t\t${fl.name}: Number(${raw}),`;
			return `\t\t${fl.name}: ${raw}.trim(),`;
		})
		.join("\n");
	const describeLines = en.fields.map((fl) => `\t\t\`  ${fl.name}: \${${l}.${fl.name}}\`,`).join("\n");
	const diffLines = en.fields
		.map(
			(fl) =>
				`\tif (before.${fl.name} !== after.${fl.name}) changes.push(\`${fl.name}: \${String(before.${fl.name})} -> \${String(after.${fl.name})}\`);`,
		)
		.join("\n");
	const dateField = en.fields.find((fl) => fl.type === "date")?.name ?? "id";
	const transitions = en.statuses
		.slice(0, -1)
		.map((s, i) => `\t\tcase "${s}":\n\t\t\treturn event === "advance" ? "${en.statuses[i + 1]}" : current;`)
		.join("\n");
	const filterFields = en.fields.filter((fl) => fl.type === "string").slice(0, 2);
	const whereLines = filterFields
		.map(
			(fl) => `\tif (filter.${fl.name} !== undefined) {
		params.push(filter.${fl.name});
		where.push(\`${snake(fl.name)} = $\${params.length}\`);
	}`,
		)
		.join("\n");
	return `// ---------------------------------------------------------------------------------------------
// ${E}
// ---------------------------------------------------------------------------------------------

/** Lifecycle states of a ${l}. */
export type ${status} = ${en.statuses.map((s) => `"${s}"`).join(" | ")};

/** Events that move a ${l} through its lifecycle. */
export type ${E}Event = "advance" | "cancel" | "reopen";

/** A ${l} as stored in the \`${snake(mod)}\` schema. */
export interface ${E} {
	id: string;
	status: ${status};
${fieldLines}
}

/** Filter accepted by {@link build${E}Query}. */
export interface ${E}Filter {
${filterFields.map((fl) => `\t${fl.name}?: string;`).join("\n")}
	status?: ${status};
	limit?: number;
}

/**
 * Checks a ${l} before it is stored. Returns every problem found (an empty list means valid) so the
 * API can report them all at once.
 */
export function validate${E}(input: Partial<${E}>): ValidationIssue[] {
	const issues: ValidationIssue[] = [];
	if (!input.id || !/^${en.prefix}-\\d{4,}$/.test(input.id)) {
		issues.push({ field: "id", message: "expected ${en.prefix}-<number>" });
	}
	if (input.status !== undefined && !${l}Statuses.includes(input.status)) {
		issues.push({ field: "status", message: \`unknown status \${input.status}\` });
	}
${checks}
	return issues;
}

/** Every ${l} status, in lifecycle order. */
export const ${l}Statuses: readonly ${status}[] = [${en.statuses.map((s) => `"${s}"`).join(", ")}];

/**
 * Parses one line of a \`${l}s.csv\` import (semicolon separated: id;status;${en.fields.map((fl) => fl.name).join(";")}).
 * \`lineNo\` is only used in error messages.
 */
export function parse${E}Row(line: string, lineNo: number): ${E} {
	const parts = line.split(";");
	if (parts.length !== ${en.fields.length + 2}) {
		throw new SyntaxError(\`${l}s.csv:\${lineNo}: expected ${en.fields.length + 2} fields, got \${parts.length}\`);
	}
	const status = parts[1].trim() as ${status};
	if (!${l}Statuses.includes(status)) {
		throw new SyntaxError(\`${l}s.csv:\${lineNo}: unknown status "\${parts[1]}"\`);
	}
	return {
		id: parts[0].trim(),
		status,
${parseFields}
	};
}

/** A short multi-line description of a ${l} for logs and support tickets. */
export function describe${E}(${l}: ${E}): string {
	return [
		\`${E} \${${l}.id} (\${${l}.status})\`,
${describeLines}
	].join("\\n");
}

/** The next status of a ${l} after \`event\`; unknown transitions leave the status unchanged. */
export function next${E}Status(current: ${status}, event: ${E}Event): ${status} {
	if (event === "cancel") return "${en.statuses[en.statuses.length - 1]}";
	if (event === "reopen") return "${en.statuses[0]}";
	switch (current) {
${transitions}
		default:
			return current;
	}
}

/** Field-by-field differences between two versions of a ${l}, for the audit log. */
export function diff${E}(before: ${E}, after: ${E}): string[] {
	const changes: string[] = [];
	if (before.status !== after.status) changes.push(\`status: \${before.status} -> \${after.status}\`);
${diffLines}
	return changes;
}

/** Builds the SQL for listing ${l}s with a filter; values are always passed as parameters. */
export function build${E}Query(filter: ${E}Filter): { sql: string; params: unknown[] } {
	const where: string[] = [];
	const params: unknown[] = [];
${whereLines}
	if (filter.status !== undefined) {
		params.push(filter.status);
		where.push(\`status = $\${params.length}\`);
	}
	const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
	const clause = where.length > 0 ? \` WHERE \${where.join(" AND ")}\` : "";
	return { sql: \`SELECT * FROM ${snake(mod)}.${snake(E)}s\${clause} ORDER BY id LIMIT \${limit}\`, params };
}

/** Groups ${l}s by the month (YYYY-MM) of their \`${dateField}\`. */
export function group${E}sByMonth(items: readonly ${E}[]): Map<string, ${E}[]> {
	const groups = new Map<string, ${E}[]>();
	for (const item of items) {
		const month = String(item.${dateField}).slice(0, 7);
		const group = groups.get(month);
		if (group) group.push(item);
		else groups.set(month, [item]);
	}
	return groups;
}

/** One page of ${l}s (1-based \`page\`). */
export function page${E}s(items: readonly ${E}[], page: number, size: number): ${E}[] {
	if (!Number.isInteger(page) || page < 1) throw new RangeError(\`page must be a positive integer, got \${page}\`);
	if (!Number.isInteger(size) || size < 1 || size > 500) throw new RangeError(\`size out of range: \${size}\`);
	return items.slice((page - 1) * size, page * size);
}

/** In-memory store of ${l}s, used by the tests and the CLI's offline mode. */
export class ${E}Store {
	private readonly items = new Map<string, ${E}>();

	/** Adds a ${l}; throws if one with the same id exists or it does not validate. */
	add(item: ${E}): void {
		const issues = validate${E}(item);
		if (issues.length > 0) {
			throw new TypeError(\`invalid ${l} \${item.id}: \${issues.map((i) => \`\${i.field} \${i.message}\`).join(", ")}\`);
		}
		if (this.items.has(item.id)) throw new Error(\`${l} \${item.id} already exists\`);
		this.items.set(item.id, item);
	}

	/** The ${l} with this id, if any. */
	get(id: string): ${E} | undefined {
		return this.items.get(id);
	}

	/** The ${l} with this id; throws if there is none. */
	require(id: string): ${E} {
		const item = this.items.get(id);
		if (!item) throw new Error(\`${l} \${id} not found\`);
		return item;
	}

	/** Every ${l} with the given status (all when omitted), sorted by id. */
	list(status?: ${status}): ${E}[] {
		return [...this.items.values()]
			.filter((item) => status === undefined || item.status === status)
			.sort((a, b) => a.id.localeCompare(b.id));
	}

	/** Removes a ${l}; returns whether it existed. */
	remove(id: string): boolean {
		return this.items.delete(id);
	}

	/** Number of ${l}s held. */
	get size(): number {
		return this.items.size;
	}
}
`;
}

function article(word: string): string {
	return /^[aeiou]/i.test(word) ? "an" : "a";
}

function snake(s: string): string {
	return s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function sample(en: Entity, n: number): Record<string, string | number> {
	const out: Record<string, string | number> = { id: `${en.prefix}-${1000 + n}`, status: en.statuses[0] };
	for (const fl of en.fields) {
		out[fl.name] =
			fl.type === "date" ? `2024-0${(n % 9) + 1}-1${n % 10}` : fl.type === "number" ? n + 1 : `${fl.name}-${n}`;
	}
	return out;
}

const IMPORTS: Record<string, string[]> = {
	lineTotal: ["applyRate", "assertMinor", "Minor"],
	tax: ["applyRate", "assertMinor", "Minor"],
	allocate: ["allocateMinor", "assertMinor", "Minor"],
	convert: ["applyRate", "assertMinor", "Minor"],
	format: ["assertMinor", "formatMinor", "Minor"],
	sum: ["Minor", "sumMinor"],
	fee: ["applyRate", "assertMinor", "Minor"],
};

function moneyImports(kinds: string[]): string {
	const names = [...new Set(kinds.flatMap((k) => IMPORTS[k]))].sort((a, b) => a.localeCompare(b));
	return names.map((n) => (n === "Minor" ? "type Minor" : n)).join(", ");
}

const HEADER_OLD = ` * Amounts are plain numbers in MAJOR units (12.5 means 12.50 in the document's currency) and are
 * rounded to cents with Math.round(x * 100) / 100 wherever a result leaves this module.
 */`;

const HEADER_NEW = ` * Amounts are integers in MINOR units (1250 means 12.50 in the document's currency). The money
 * functions round half up, once per operation, with the helpers in src/money.ts.
 */`;

/** Every module of the project, with its money functions. */
export const LEDGER_MODULES: LedgerModule[] = MODULE_DEFS.map((def, i) => {
	const money = def.kinds.map((k, j) => moneyFunction(k, def.entity, i * 7 + j));
	return {
		name: def.name,
		entity: def.entity,
		money,
		header: { oldText: HEADER_OLD, newText: HEADER_NEW },
		importLine: `import { isIsoDate, type ValidationIssue } from "./types.ts";`,
		newImportLine: `import { ${moneyImports(def.kinds)} } from "./money.ts";
import { isIsoDate, type ValidationIssue } from "./types.ts";`,
	};
});

function moduleSource(def: (typeof MODULE_DEFS)[number], mod: LedgerModule): string {
	const E = def.entity;
	const head = `/**
 * ${E}s: the ${def.name} domain of ledger-service (validation, CSV import, lifecycle, queries, and
 * the money arithmetic for ${lower(E)} documents).
 *
${HEADER_OLD}
${mod.importLine}

/** One priced line of a ${lower(E)}. */
export interface ${E}Line {
	sku: string;
	description: string;
	unitPrice: number;
	quantity: number;
	/** 0.1 is 10 % off this line. */
	discountRate: number;
}
`;
	const parts: string[] = [head];
	def.entities.forEach((en, k) => {
		parts.push(entityCode(en, def.name));
		const m = mod.money.slice(Math.floor((k * mod.money.length) / 3), Math.floor(((k + 1) * mod.money.length) / 3));
		if (m.length > 0) {
			parts.push(
				`// ---------------------------------------------------------------------------------------------\n// Money\n// ---------------------------------------------------------------------------------------------\n`,
			);
			for (const fn of m) parts.push(`${fn.oldText}\n`);
		}
	});
	return parts.join("\n");
}

function moduleTest(def: (typeof MODULE_DEFS)[number], mod: LedgerModule): string {
	const names = [
		...mod.money.map((m) => m.name),
		...def.entities.flatMap((en) => [
			`validate${en.name}`,
			`parse${en.name}Row`,
			`${en.name}Store`,
			`page${en.name}s`,
		]),
	];
	const entityTests = def.entities
		.map((en, n) => {
			const s = sample(en, n + 3);
			const row = [s.id, s.status, ...en.fields.map((fl) => s[fl.name])].join(";");
			return `	it("validates and stores ${article(en.name)} ${lower(en.name)}", () => {
		const item = ${JSON.stringify(s)} as const;
		assert.deepEqual(validate${en.name}({ ...item }), []);
		const store = new ${en.name}Store();
		store.add({ ...item });
		assert.equal(store.require("${s.id}").status, "${s.status}");
		assert.throws(() => store.require("${en.prefix}-0"), /not found/);
	});

	it("parses ${article(en.name)} ${lower(en.name)} CSV row", () => {
		assert.equal(parse${en.name}Row(${JSON.stringify(row)}, 2).id, "${s.id}");
		assert.throws(() => parse${en.name}Row("${s.id};${s.status}", 7), /${lower(en.name)}s.csv:7/);
	});

	it("pages ${lower(en.name)}s", () => {
		assert.throws(() => page${en.name}s([], 0, 10), RangeError);
	});`;
		})
		.join("\n\n");
	return `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
${names.map((n) => `\t${n},`).join("\n")}
} from "../src/${def.name}.ts";

describe("${def.name}: money in minor units", () => {
	${mod.money.map((m) => m.test).join("\n\n\t")}
});

describe("${def.name}: domain", () => {
${entityTests}
});
`;
}

/** The money helpers the agent writes; `buggy` has the allocation bug the first test run finds. */
export function moneySource(buggy: boolean): string {
	const rest = buggy
		? `	let rest = amount - shares.reduce((sum, s) => sum + s, 0);
	const order = weights
		.map((w, i) => ({ i, frac: (amount * w) / total - shares[i] }))
		.sort((a, b) => b.frac - a.frac || a.i - b.i);
	for (let k = 0; rest > 0; k++) {
		shares[order[k % order.length].i] += 1;
		rest -= 1;
	}`
		: MONEY_FIX;
	return `/**
 * Money in integer minor units (cents for EUR/USD, yen for JPY). Every amount that crosses a module
 * boundary is a safe integer of the currency's minor unit; conversion to and from decimal strings
 * happens only at the edges (CSV import, statements, the legacy exporter keeps its own formatting).
 *
 * Rounding is half up away from zero, applied once per operation, which is what finance uses when
 * they reconcile per line.
 */

/** An amount in minor units of some currency: always a safe integer. */
export type Minor = number;

/** Decimal places of the minor unit per ISO 4217 code; anything not listed has two. */
export const MINOR_DIGITS: Readonly<Record<string, number>> = {
	BHD: 3,
	CLP: 0,
	ISK: 0,
	JOD: 3,
	JPY: 0,
	KRW: 0,
	KWD: 3,
	OMR: 3,
	TND: 3,
	UGX: 0,
	VND: 0,
	XAF: 0,
	XOF: 0,
};

/** Number of decimals of \`currency\`'s minor unit. */
export function minorDigits(currency: string): number {
	return MINOR_DIGITS[currency.toUpperCase()] ?? 2;
}

/** Returns \`value\` if it is a safe integer, else throws a TypeError naming \`label\`. */
export function assertMinor(value: number, label = "amount"): Minor {
	if (!Number.isSafeInteger(value)) {
		throw new TypeError(\`\${label} must be an integer amount of minor units, got \${value}\`);
	}
	return value;
}

/** Rounds half up, away from zero: 2.5 -> 3, -2.5 -> -3. */
export function roundHalfUp(value: number): Minor {
	const rounded = Math.sign(value) * Math.round(Math.abs(value));
	return rounded === 0 ? 0 : rounded;
}

/** \`amount\` times \`rate\`, rounded half up to the minor unit. */
export function applyRate(amount: Minor, rate: number): Minor {
	if (!Number.isFinite(rate)) throw new RangeError(\`rate must be finite, got \${rate}\`);
	return roundHalfUp(amount * rate);
}

/** Sum of minor-unit amounts; throws on the first non-integer. */
export function sumMinor(values: readonly Minor[]): Minor {
	let total = 0;
	for (const [i, v] of values.entries()) total += assertMinor(v, \`values[\${i}]\`);
	return assertMinor(total, "sum");
}

/**
 * Splits \`amount\` across \`weights\` with the largest-remainder method: every share is the
 * truncated proportional share, and the minor units left over go one by one to the shares with the
 * largest remainders (ties to the earlier weight). The shares always add up to \`amount\`.
 */
export function allocateMinor(amount: Minor, weights: readonly number[]): Minor[] {
	assertMinor(amount);
	if (weights.length === 0) throw new RangeError("weights must not be empty");
	if (weights.some((w) => !(w >= 0))) throw new RangeError("weights must be non-negative numbers");
	const total = weights.reduce((sum, w) => sum + w, 0);
	if (total <= 0) throw new RangeError("weights must add up to a positive number");
	const shares = weights.map((w) => Math.trunc((amount * w) / total));
${rest}
	return shares;
}

/** Major units (a decimal number) to minor units of \`currency\`, rounded half up. */
export function toMinor(major: number, currency = "EUR"): Minor {
	return roundHalfUp(major * 10 ** minorDigits(currency));
}

/** Minor units to major units of \`currency\` (for display only; never compute with the result). */
export function fromMinor(amount: Minor, currency = "EUR"): number {
	return assertMinor(amount) / 10 ** minorDigits(currency);
}

/** Parses a decimal string such as "1234.5" or "-0.07" into minor units of \`currency\`. */
export function parseMajor(text: string, currency = "EUR"): Minor {
	const match = /^(-)?(\\d+)(?:\\.(\\d+))?$/.exec(text.trim());
	if (!match) throw new SyntaxError(\`not a decimal amount: "\${text}"\`);
	const digits = minorDigits(currency);
	const fraction = (match[3] ?? "").padEnd(digits, "0");
	if (fraction.length > digits) throw new RangeError(\`"\${text}" has more than \${digits} decimals for \${currency}\`);
	const value = Number(match[2]) * 10 ** digits + Number(fraction || "0");
	return match[1] ? -value : value;
}

/** "1234.56 EUR" for 123456 EUR; "1235 JPY" for 1235 JPY. */
export function formatMinor(amount: Minor, currency: string): string {
	const digits = minorDigits(currency);
	const sign = amount < 0 ? "-" : "";
	const abs = Math.abs(assertMinor(amount));
	const major = Math.trunc(abs / 10 ** digits);
	const minor = abs % 10 ** digits;
	const decimals = digits > 0 ? \`.\${String(minor).padStart(digits, "0")}\` : "";
	return \`\${sign}\${major}\${decimals} \${currency.toUpperCase()}\`;
}
`;
}

const MONEY_FIX = `	let rest = amount - shares.reduce((sum, s) => sum + s, 0);
	const order = weights
		.map((w, i) => ({ i, frac: Math.abs((amount * w) / total - shares[i]) }))
		.sort((a, b) => b.frac - a.frac || a.i - b.i);
	const step = Math.sign(rest);
	for (let k = 0; rest !== 0; k++) {
		shares[order[k % order.length].i] += step;
		rest -= step;
	}`;

/** The text the allocation fix replaces, and its replacement. */
export const MONEY_ALLOCATION_FIX = {
	oldText: moneySource(true).match(/\tlet rest[\s\S]*?\n\t}/)![0],
	newText: MONEY_FIX,
};

/** Tests the agent writes for the money helpers. */
export const MONEY_TEST = `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	allocateMinor,
	applyRate,
	assertMinor,
	formatMinor,
	fromMinor,
	parseMajor,
	roundHalfUp,
	sumMinor,
	toMinor,
} from "../src/money.ts";

describe("money", () => {
	it("rounds half up away from zero", () => {
		assert.equal(roundHalfUp(2.5), 3);
		assert.equal(roundHalfUp(-2.5), -3);
		assert.equal(roundHalfUp(-0.4), 0);
	});

	it("rejects non-integer minor amounts", () => {
		assert.throws(() => assertMinor(12.5), /integer amount of minor units/);
		assert.throws(() => sumMinor([1, 2, 0.5]), /values\\[2\\]/);
	});

	it("applies rates", () => {
		assert.equal(applyRate(1999, 1.075), 2149);
		assert.equal(applyRate(-1999, 1.075), -2149);
	});

	it("allocates without losing a minor unit", () => {
		assert.deepEqual(allocateMinor(1000, [1, 1, 1]), [334, 333, 333]);
		assert.deepEqual(allocateMinor(10, [1, 0, 1]), [5, 0, 5]);
		assert.deepEqual(allocateMinor(-1000, [1, 1, 1]), [-334, -333, -333]);
	});

	it("converts between major and minor units", () => {
		assert.equal(toMinor(12.34), 1234);
		assert.equal(toMinor(1234, "JPY"), 1234);
		assert.equal(fromMinor(1234), 12.34);
		assert.equal(parseMajor("1234.5"), 123450);
		assert.equal(parseMajor("-0.07"), -7);
		assert.throws(() => parseMajor("1.234"), /more than 2 decimals/);
	});

	it("formats", () => {
		assert.equal(formatMinor(123456, "EUR"), "1234.56 EUR");
		assert.equal(formatMinor(-7, "usd"), "-0.07 USD");
		assert.equal(formatMinor(1235, "JPY"), "1235 JPY");
		assert.equal(formatMinor(1234567, "KWD"), "1234.567 KWD");
	});
});
`;

const LEGACY_CSV = `/**
 * Legacy CSV export for the bank's reconciliation importer. FROZEN: the importer parses this
 * output byte for byte (decimal amounts with a dot, two decimals, CRLF line ends). Do not change
 * the format; see docs/legacy-export.md.
 */
process.emitWarning("src/legacy/csv-export.ts is deprecated; use the statements API", {
	type: "DeprecationWarning",
	code: "LEDGER_LEGACY_CSV",
});

/** A row of the legacy export. */
export interface LegacyRow {
	date: string;
	reference: string;
	/** Major units. */
	amount: number;
	currency: string;
}

/** Quotes a field the way the importer expects (only when needed). */
function field(value: string): string {
	return /[";\\r\\n]/.test(value) ? \`"\${value.replaceAll('"', '""')}"\` : value;
}

/** The CSV text for \`rows\`, header first, CRLF line ends. */
export function exportLegacyCsv(rows: readonly LegacyRow[]): string {
	const lines = ["date;reference;amount;currency"];
	for (const row of rows) {
		lines.push([row.date, field(row.reference), row.amount.toFixed(2), row.currency].join(";"));
	}
	return \`\${lines.join("\\r\\n")}\\r\\n\`;
}
`;

const LEGACY_TEST = `import assert from "node:assert/strict";
import { it } from "node:test";
import { exportLegacyCsv } from "../src/legacy/csv-export.ts";

it("legacy export keeps its exact format", () => {
	const csv = exportLegacyCsv([{ date: "2024-03-01", reference: "INV-1042", amount: 12.5, currency: "EUR" }]);
	assert.equal(csv, "date;reference;amount;currency\\r\\n2024-03-01;INV-1042;12.50;EUR\\r\\n");
});
`;

const TYPES = `/**
 * Types and small checks shared by every domain module.
 */

/** One problem found by a validate* function. */
export interface ValidationIssue {
	field: string;
	message: string;
}

/** Whether \`value\` is a calendar date written YYYY-MM-DD. */
export function isIsoDate(value: string): boolean {
	if (!/^\\d{4}-\\d{2}-\\d{2}$/.test(value)) return false;
	const date = new Date(\`\${value}T00:00:00Z\`);
	return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}
`;

const CLI = `/**
 * ledger-service command line: \`node src/cli.ts statement --account <id> --month YYYY-MM\`.
 * Prints a plain-text statement for one account and month from data/ledger.json.
 */
import { readFileSync } from "node:fs";
import { formatInvoiceAmount } from "./invoices.ts";

interface LedgerFile {
	accounts: Record<string, { currency: string; entries: { date: string; text: string; amount: number }[] }>;
}

function parseMonth(value: string | undefined): string {
	if (!value || !/^\\d{4}-\\d{2}$/.test(value)) throw new RangeError(\`--month must be YYYY-MM, got \${value}\`);
	const month = Number(value.slice(5));
	if (month < 1 || month > 12) throw new RangeError(\`invalid month: \${value}\`);
	return value;
}

function option(args: string[], name: string): string | undefined {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : undefined;
}

function statement(args: string[]): void {
	const month = parseMonth(option(args, "--month"));
	const accountId = option(args, "--account") ?? "";
	const ledger = JSON.parse(readFileSync(new URL("../data/ledger.json", import.meta.url), "utf8")) as LedgerFile;
	const account = ledger.accounts[accountId];
	if (!account) throw new Error(\`unknown account \${accountId}\`);
	const rows = account.entries.filter((e) => e.date.startsWith(month));
	console.log(\`Statement \${accountId} \${month}\`);
	for (const row of rows) console.log(\`\${row.date}  \${row.text.padEnd(32)} \${formatInvoiceAmount(row.amount, account.currency)}\`);
	const total = rows.reduce((sum, r) => sum + r.amount, 0);
	console.log(\`Total: \${formatInvoiceAmount(total, account.currency)}\`);
}

const [command, ...rest] = process.argv.slice(2);
if (command === "statement") statement(rest);
else {
	console.error("usage: node src/cli.ts statement --account <id> --month YYYY-MM");
	process.exitCode = 2;
}
`;

function ledgerData(): string {
	const entries = [];
	for (let i = 0; i < 24; i++) {
		entries.push({
			date: `2024-0${(i % 3) + 1}-${String((i % 27) + 1).padStart(2, "0")}`,
			text: ["Invoice INV-10", "Payment PAY-20", "Refund RF-30", "Fee FR-40"][i % 4] + String(i).padStart(2, "0"),
			amount: (i % 4 === 2 ? -1 : 1) * (1999 + i * 137),
		});
	}
	return `${JSON.stringify({ accounts: { "ACC-1042": { currency: "EUR", entries } } }, null, 2)}\n`;
}

const README = `# ledger-service

Billing and ledger library behind the invoicing API: invoices, payments, refunds, subscriptions,
discounts, payouts, fees, transfers, disputes, settlements, quotes, orders, customer credits,
wallets, rewards and budgets.

## Layout

- \`src/<domain>.ts\`: one module per domain (validation, CSV import, lifecycle, SQL, money)
- \`src/legacy/\`: the frozen CSV export for the bank's importer (do not touch)
- \`src/cli.ts\`: statements from \`data/ledger.json\`
- \`test/\`: node:test suites, one per domain

## Amounts

Historically every amount is a JavaScript number in major units (12.5 = 12.50 EUR), rounded with
\`Math.round(x * 100) / 100\`. This loses cents in allocations and drifts in sums; see issue #412.
The plan (#412) is integer minor units everywhere, with decimal strings only at the edges.

## Commands

    npm test            # node --test, spec reporter
    npm run typecheck   # tsc --noEmit
    node src/cli.ts statement --account ACC-1042 --month 2024-02
`;

const LABEL_KEYS = [
	"statement",
	"balance",
	"subtotal",
	"opening",
	"invoices",
	"payments",
	"refunds",
	"fees",
	"adjustments",
	"closing",
	"page",
	"accountHolder",
	"generatedOn",
	"reference",
	"date",
	"description",
	"amount",
	"carriedForward",
];

const LABEL_ROWS = [
	"en|Statement|Balance|Subtotal|Opening balance|Invoices|Payments|Refunds|Fees|Adjustments|Closing balance|Page|Account holder|Generated on|Reference|Date|Description|Amount|Carried forward",
	"de|Kontoauszug|Saldo|Zwischensumme|Anfangssaldo|Rechnungen|Zahlungen|Erstattungen|Gebühren|Korrekturen|Endsaldo|Seite|Kontoinhaber|Erstellt am|Referenz|Datum|Beschreibung|Betrag|Übertrag",
	"fr|Relevé|Solde|Sous-total|Solde d'ouverture|Factures|Paiements|Remboursements|Frais|Ajustements|Solde de clôture|Page|Titulaire du compte|Généré le|Référence|Date|Description|Montant|Report",
	"es|Extracto|Saldo|Subtotal|Saldo inicial|Facturas|Pagos|Reembolsos|Comisiones|Ajustes|Saldo final|Página|Titular de la cuenta|Generado el|Referencia|Fecha|Descripción|Importe|Suma y sigue",
	"it|Estratto conto|Saldo|Subtotale|Saldo iniziale|Fatture|Pagamenti|Rimborsi|Commissioni|Rettifiche|Saldo finale|Pagina|Intestatario|Generato il|Riferimento|Data|Descrizione|Importo|Riporto",
	"nl|Afschrift|Saldo|Subtotaal|Beginsaldo|Facturen|Betalingen|Terugbetalingen|Kosten|Correcties|Eindsaldo|Pagina|Rekeninghouder|Aangemaakt op|Referentie|Datum|Omschrijving|Bedrag|Transport",
	"pt|Extrato|Saldo|Subtotal|Saldo inicial|Faturas|Pagamentos|Reembolsos|Taxas|Ajustes|Saldo final|Página|Titular da conta|Gerado em|Referência|Data|Descrição|Valor|A transportar",
	"sv|Kontoutdrag|Saldo|Delsumma|Ingående saldo|Fakturor|Betalningar|Återbetalningar|Avgifter|Justeringar|Utgående saldo|Sida|Kontoinnehavare|Skapad|Referens|Datum|Beskrivning|Belopp|Överfört",
	"da|Kontoudtog|Saldo|Subtotal|Primosaldo|Fakturaer|Betalinger|Refusioner|Gebyrer|Reguleringer|Ultimosaldo|Side|Kontohaver|Oprettet|Reference|Dato|Beskrivelse|Beløb|Transport",
	"nb|Kontoutskrift|Saldo|Delsum|Inngående saldo|Fakturaer|Betalinger|Refusjoner|Gebyrer|Justeringer|Utgående saldo|Side|Kontoinnehaver|Opprettet|Referanse|Dato|Beskrivelse|Beløp|Overført",
	"pl|Wyciąg|Saldo|Suma częściowa|Saldo początkowe|Faktury|Płatności|Zwroty|Opłaty|Korekty|Saldo końcowe|Strona|Posiadacz rachunku|Wygenerowano|Odnośnik|Data|Opis|Kwota|Z przeniesienia",
	"fi|Tiliote|Saldo|Välisumma|Alkusaldo|Laskut|Maksut|Hyvitykset|Maksut ja palkkiot|Oikaisut|Loppusaldo|Sivu|Tilinomistaja|Luotu|Viite|Päivä|Kuvaus|Summa|Siirto",
	"cs|Výpis|Zůstatek|Mezisoučet|Počáteční zůstatek|Faktury|Platby|Vratky|Poplatky|Opravy|Konečný zůstatek|Strana|Majitel účtu|Vytvořeno|Reference|Datum|Popis|Částka|Převod",
];

/** The statement renderer the agent writes in one go late in the session (a long write). */
export function statementRenderer(): string {
	const currencies = [
		"AED UAE Dirham",
		"AUD Australian Dollar",
		"BGN Bulgarian Lev",
		"BHD Bahraini Dinar",
		"BRL Brazilian Real",
		"CAD Canadian Dollar",
		"CHF Swiss Franc",
		"CLP Chilean Peso",
		"CNY Yuan Renminbi",
		"CZK Czech Koruna",
		"DKK Danish Krone",
		"EUR Euro",
		"GBP Pound Sterling",
		"HKD Hong Kong Dollar",
		"HUF Forint",
		"IDR Rupiah",
		"ILS New Israeli Sheqel",
		"INR Indian Rupee",
		"ISK Iceland Krona",
		"JOD Jordanian Dinar",
		"JPY Yen",
		"KRW Won",
		"KWD Kuwaiti Dinar",
		"MXN Mexican Peso",
		"MYR Malaysian Ringgit",
		"NOK Norwegian Krone",
		"NZD New Zealand Dollar",
		"OMR Rial Omani",
		"PHP Philippine Peso",
		"PLN Zloty",
		"RON Romanian Leu",
		"SAR Saudi Riyal",
		"SEK Swedish Krona",
		"SGD Singapore Dollar",
		"THB Baht",
		"TND Tunisian Dinar",
		"TRY Turkish Lira",
		"UGX Uganda Shilling",
		"USD US Dollar",
		"VND Dong",
		"XAF CFA Franc BEAC",
		"XOF CFA Franc BCEAO",
		"ZAR Rand",
		"ARS Argentine Peso",
		"BDT Taka",
		"COP Colombian Peso",
		"EGP Egyptian Pound",
		"GEL Lari",
		"GHS Ghana Cedi",
		"KES Kenyan Shilling",
		"KZT Tenge",
		"LKR Sri Lanka Rupee",
		"MAD Moroccan Dirham",
		"NGN Naira",
		"PEN Sol",
		"PKR Pakistan Rupee",
		"QAR Qatari Rial",
		"RSD Serbian Dinar",
		"TWD New Taiwan Dollar",
		"UAH Hryvnia",
		"UYU Peso Uruguayo",
	];
	const table = currencies
		.map((c) => {
			const [code, ...name] = c.split(" ");
			return `\t${code}: { name: "${name.join(" ")}", symbol: "${code}", separator: "${["EUR", "DKK", "NOK", "SEK", "PLN", "CZK", "HUF", "RON", "BGN", "TRY", "BRL", "IDR", "VND"].includes(code) ? "," : "."}", group: "${["CHF"].includes(code) ? "'" : ["EUR", "DKK", "NOK", "SEK", "PLN", "CZK", "HUF", "RON", "BGN", "TRY", "BRL", "IDR", "VND"].includes(code) ? "." : ","}" },`;
		})
		.join("\n");
	const labels = LABEL_ROWS.map((row) => {
		const [locale, ...words] = row.split("|");
		const pairs = LABEL_KEYS.map((key, i) => `\t\t${key}: ${JSON.stringify(words[i])},`).join("\n");
		return `\t${JSON.stringify(locale)}: {\n${pairs}\n\t},`;
	}).join("\n");
	const sections = ["opening", "invoices", "payments", "refunds", "fees", "adjustments", "closing"]
		.map(
			(s) => `/**
 * The "${s}" section of a statement: a heading, one row per line item, and a subtotal. Empty
 * sections are left out unless \`options.showEmpty\` is set.
 */
function ${s}Section(items: readonly StatementItem[], options: RenderOptions): string[] {
	const rows = items.filter((item) => item.section === "${s}");
	if (rows.length === 0 && !options.showEmpty) return [];
	const words = labelsFor(options.locale);
	const out = [heading(words.${s}, options.width)];
	for (const item of rows) out.push(...itemRow(item, options));
	const subtotal = rows.reduce((sum, item) => sum + item.amount, 0);
	out.push(rule(options.width, "-"));
	out.push(pad(\`\${words.subtotal} \${words.${s}.toLowerCase()}\`, formatAmount(subtotal, options), options.width));
	out.push("");
	return out;
}
`,
		)
		.join("\n");
	return `/**
 * Plain-text account statements: fixed-width, monospaced, for the e-mail body and the PDF
 * renderer's text layer. Amounts are integer minor units (see src/money.ts); the renderer only
 * formats them, it never computes with major units.
 *
 * Layout (width 96 by default):
 *
 *     ledger-service                                            Statement ACC-1042 / 2024-02
 *     ================================================================================
 *     Invoices
 *     2024-02-03  INV-1042  Annual plan, 12 seats                          1 234,56 EUR
 *     ...
 *     --------------------------------------------------------------------------------
 *     Subtotal invoices                                                     9 876,54 EUR
 */
import { assertMinor, type Minor, minorDigits } from "../money.ts";

/** Display conventions of a currency: decimal separator and digit grouping. */
export interface CurrencyStyle {
	name: string;
	symbol: string;
	separator: string;
	group: string;
}

/** Display conventions per ISO 4217 code; unknown codes use "." and ",". */
export const CURRENCY_STYLES: Readonly<Record<string, CurrencyStyle>> = {
${table}
};

/** A line item of a statement. */
export interface StatementItem {
	section: "opening" | "invoices" | "payments" | "refunds" | "fees" | "adjustments" | "closing";
	date: string;
	reference: string;
	text: string;
	amount: Minor;
}

/** A statement to render. */
export interface Statement {
	accountId: string;
	holder: string;
	month: string;
	currency: string;
	items: StatementItem[];
}

/** Rendering options. */
export interface RenderOptions {
	width: number;
	currency: string;
	showEmpty: boolean;
	/** Column of the amount's right edge, from the right margin. */
	amountMargin: number;
	/** BCP 47 tag of the statement's language, e.g. "de-CH". */
	locale: string;
}

const DEFAULTS: RenderOptions = { width: 96, currency: "EUR", showEmpty: false, amountMargin: 0, locale: "en" };

/** Words of a statement in one language. */
export interface StatementLabels {
${LABEL_KEYS.map((k) => `\t${k}: string;`).join("\n")}
}

/** Statement words per locale; unknown locales fall back to "en". */
export const LABELS: Readonly<Record<string, StatementLabels>> = {
${labels}
};

/** The labels for \`locale\` ("de-CH" falls back to "de", then to "en"). */
export function labelsFor(locale: string): StatementLabels {
	return LABELS[locale] ?? LABELS[locale.split("-")[0]] ?? LABELS.en;
}

/** The style for \`currency\`. */
export function styleOf(currency: string): CurrencyStyle {
	return CURRENCY_STYLES[currency.toUpperCase()] ?? { name: currency, symbol: currency, separator: ".", group: "," };
}

/** Groups the integer digits of \`digits\` in threes with \`group\`. */
export function groupDigits(digits: string, group: string): string {
	let out = "";
	for (let i = 0; i < digits.length; i++) {
		if (i > 0 && (digits.length - i) % 3 === 0) out += group;
		out += digits[i];
	}
	return out;
}

/** Formats minor units with the currency's separators: 123456 EUR is "1.234,56 EUR". */
export function formatAmount(amount: Minor, options: Pick<RenderOptions, "currency">): string {
	const digits = minorDigits(options.currency);
	const style = styleOf(options.currency);
	const abs = Math.abs(assertMinor(amount));
	const major = groupDigits(String(Math.trunc(abs / 10 ** digits)), style.group);
	const minor = digits > 0 ? style.separator + String(abs % 10 ** digits).padStart(digits, "0") : "";
	return \`\${amount < 0 ? "-" : ""}\${major}\${minor} \${style.symbol}\`;
}

/** A line of \`width\` characters made of \`char\`. */
export function rule(width: number, char = "="): string {
	return char.repeat(width);
}

/** \`left\` and \`right\` on one line of \`width\`, right-aligned; \`left\` is cut with an ellipsis. */
export function pad(left: string, right: string, width: number): string {
	const room = width - right.length - 1;
	const cut = left.length > room ? \`\${left.slice(0, Math.max(0, room - 1))}…\` : left;
	return \`\${cut}\${" ".repeat(Math.max(1, width - cut.length - right.length))}\${right}\`;
}

/** A section heading. */
export function heading(text: string, width: number): string {
	return \`\${text}\\n\${rule(Math.min(width, text.length), "~")}\`;
}

/** Wraps \`text\` at word boundaries into lines of at most \`width\` characters. */
export function wrap(text: string, width: number): string[] {
	const words = text.split(/\\s+/).filter(Boolean);
	const lines: string[] = [];
	let line = "";
	for (const word of words) {
		if (line.length === 0) line = word;
		else if (line.length + 1 + word.length <= width) line += \` \${word}\`;
		else {
			lines.push(line);
			line = word;
		}
	}
	if (line) lines.push(line);
	return lines;
}

/** The rows of one item: date, reference and text (wrapped), amount on the first row. */
export function itemRow(item: StatementItem, options: RenderOptions): string[] {
	const amount = formatAmount(item.amount, options);
	const textWidth = options.width - 24 - amount.length;
	const [first, ...more] = wrap(item.text, Math.max(10, textWidth));
	const rows = [pad(\`\${item.date}  \${item.reference.padEnd(10)}\${first ?? ""}\`, amount, options.width)];
	for (const line of more) rows.push(\`\${" ".repeat(22)}\${line}\`);
	return rows;
}

${sections}
/** A rendered page: its lines and its 1-based number. */
export interface Page {
	number: number;
	lines: string[];
}

/** Options of {@link paginate}. */
export interface PageOptions {
	/** Lines per page including header and footer. */
	height: number;
	width: number;
	locale: string;
	/** Printed at the top of every page after the first. */
	runningTitle: string;
}

/**
 * Splits rendered statement lines into pages of \`options.height\` lines. Every page after the first
 * repeats the running title; every page but the last ends with the amount carried forward, which is
 * the sum of the amounts on the lines so far (read back from the right edge of each line).
 */
export function paginate(lines: readonly string[], amounts: readonly (Minor | undefined)[], options: PageOptions, currency: string): Page[] {
	if (options.height < 8) throw new RangeError(\`page height must be at least 8 lines, got \${options.height}\`);
	if (lines.length !== amounts.length) throw new RangeError("lines and amounts must have the same length");
	const words = labelsFor(options.locale);
	const pages: Page[] = [];
	let current: string[] = [];
	let carried = 0;
	const body = options.height - 3;
	for (let i = 0; i < lines.length; i++) {
		if (current.length === 0 && pages.length > 0) {
			current.push(pad(options.runningTitle, \`\${words.page} \${pages.length + 1}\`, options.width));
			current.push(rule(options.width, "-"));
		}
		current.push(lines[i]);
		carried += amounts[i] ?? 0;
		if (current.length >= body && i < lines.length - 1) {
			current.push(rule(options.width, "-"));
			current.push(pad(words.carriedForward, formatAmount(carried, { currency }), options.width));
			pages.push({ number: pages.length + 1, lines: current });
			current = [];
		}
	}
	if (current.length > 0) pages.push({ number: pages.length + 1, lines: current });
	return pages;
}

/** The footer line of a page: generation date on the left, "Page n of m" on the right. */
export function footer(page: Page, total: number, generatedOn: string, options: Pick<PageOptions, "width" | "locale">): string {
	const words = labelsFor(options.locale);
	return pad(\`\${words.generatedOn} \${generatedOn}\`, \`\${words.page} \${page.number} / \${total}\`, options.width);
}

/** Joins pages with form feeds, each followed by its footer. */
export function joinPages(pages: readonly Page[], generatedOn: string, options: Pick<PageOptions, "width" | "locale">): string {
	return pages
		.map((page) => [...page.lines, "", footer(page, pages.length, generatedOn, options)].join("\\n"))
		.join("\\n\\f\\n");
}

/**
 * Column headings of the item table in the statement's language, aligned with {@link itemRow}:
 * date (10), two spaces, reference (10), description, amount right-aligned.
 */
export function columnHeadings(options: Pick<RenderOptions, "width" | "locale">): string {
	const words = labelsFor(options.locale);
	const left = \`\${words.date.padEnd(12)}\${words.reference.padEnd(10)}\${words.description}\`;
	return pad(left, words.amount, options.width);
}

/** Checks a statement before rendering; returns the problems found (empty when it can be rendered). */
export function checkStatement(statement: Statement): string[] {
	const problems: string[] = [];
	if (!/^\\d{4}-\\d{2}$/.test(statement.month)) problems.push(\`month must be YYYY-MM, got \${statement.month}\`);
	if (!/^[A-Z]{3}$/.test(statement.currency)) problems.push(\`currency must be an ISO 4217 code, got \${statement.currency}\`);
	for (const [i, item] of statement.items.entries()) {
		if (!Number.isSafeInteger(item.amount)) problems.push(\`items[\${i}].amount is not in minor units: \${item.amount}\`);
		if (!item.date.startsWith(statement.month)) problems.push(\`items[\${i}] (\${item.reference}) is dated \${item.date}, outside \${statement.month}\`);
		if (item.reference.length > 10) problems.push(\`items[\${i}].reference is longer than 10 characters: \${item.reference}\`);
	}
	return problems;
}

/** Renders a whole statement. */
export function renderStatement(statement: Statement, overrides: Partial<RenderOptions> = {}): string {
	const options = { ...DEFAULTS, currency: statement.currency, ...overrides };
	if (options.width < 60) throw new RangeError(\`width must be at least 60, got \${options.width}\`);
	const words = labelsFor(options.locale);
	const title = \`\${words.statement} \${statement.accountId} / \${statement.month}\`;
	const out = [pad("ledger-service", title, options.width), rule(options.width), statement.holder, ""];
	out.push(...openingSection(statement.items, options));
	out.push(...invoicesSection(statement.items, options));
	out.push(...paymentsSection(statement.items, options));
	out.push(...refundsSection(statement.items, options));
	out.push(...feesSection(statement.items, options));
	out.push(...adjustmentsSection(statement.items, options));
	out.push(...closingSection(statement.items, options));
	const balance = statement.items.reduce((sum, item) => sum + item.amount, 0);
	out.push(rule(options.width));
	out.push(pad(words.balance, formatAmount(balance, options), options.width));
	return \`\${out.join("\\n")}\\n\`;
}
`;
}

/** The renderer's tests as the agent first writes them (one expectation is wrong: CHF uses a decimal point). */
export const RENDER_TEST = `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatAmount, groupDigits, pad, renderStatement, wrap } from "../src/statements/render.ts";

describe("statement renderer", () => {
	it("groups digits", () => {
		assert.equal(groupDigits("1234567", "."), "1.234.567");
		assert.equal(groupDigits("123", "."), "123");
	});

	it("formats amounts per currency", () => {
		assert.equal(formatAmount(123456, { currency: "EUR" }), "1.234,56 EUR");
		assert.equal(formatAmount(123456, { currency: "USD" }), "1,234.56 USD");
		assert.equal(formatAmount(-7, { currency: "CHF" }), "-0,07 CHF");
		assert.equal(formatAmount(1234567, { currency: "JPY" }), "1,234,567 JPY");
	});

	it("pads and cuts", () => {
		assert.equal(pad("abc", "1", 8), "abc    1");
		assert.equal(pad("abcdefghij", "12", 8), "abcd… 12");
	});

	it("wraps at word boundaries", () => {
		assert.deepEqual(wrap("one two three four", 9), ["one two", "three", "four"]);
	});

	it("renders a statement with a balance", () => {
		const text = renderStatement({
			accountId: "ACC-1042",
			holder: "Muster GmbH",
			month: "2024-02",
			currency: "EUR",
			items: [
				{ section: "invoices", date: "2024-02-03", reference: "INV-1042", text: "Annual plan, 12 seats", amount: 123456 },
				{ section: "payments", date: "2024-02-10", reference: "PAY-2001", text: "SEPA transfer", amount: -100000 },
			],
		});
		assert.match(text, /Statement ACC-1042 \\/ 2024-02/);
		assert.match(text, /Balance +234,56 EUR/);
	});
});
`;

/** Every file of the project as the session starts (path relative to the project root). */
export function ledgerFiles(): Record<string, string> {
	const files: Record<string, string> = {
		"package.json": `${JSON.stringify(
			{
				name: "ledger-service",
				version: "3.14.0",
				private: true,
				type: "module",
				scripts: { test: "node --test --test-reporter=spec 'test/*.test.ts'", typecheck: "tsc --noEmit -p ." },
				engines: { node: ">=22.18" },
			},
			null,
			2,
		)}\n`,
		"tsconfig.json": `${JSON.stringify(
			{
				compilerOptions: {
					target: "ES2023",
					module: "NodeNext",
					moduleResolution: "NodeNext",
					lib: ["ES2023"],
					types: ["node"],
					strict: true,
					noEmit: true,
					allowImportingTsExtensions: true,
					verbatimModuleSyntax: true,
					erasableSyntaxOnly: true,
					skipLibCheck: true,
				},
				include: ["src", "test"],
			},
			null,
			2,
		)}\n`,
		".gitignore": "node_modules/\n*.log\n",
		"README.md": README,
		"src/types.ts": TYPES,
		"src/legacy/csv-export.ts": LEGACY_CSV,
		"src/cli.ts": CLI,
		"data/ledger.json": ledgerData(),
		"test/legacy.test.ts": LEGACY_TEST,
		"docs/legacy-export.md":
			"# Legacy CSV export\n\nThe bank's reconciliation importer reads `date;reference;amount;currency` with CRLF line ends\nand amounts as decimal strings with two decimals. It is byte-compared in their acceptance test:\nany change needs a change request with the bank (6-8 weeks).\n",
	};
	MODULE_DEFS.forEach((def, i) => {
		files[`src/${def.name}.ts`] = moduleSource(def, LEDGER_MODULES[i]);
		files[`test/${def.name}.test.ts`] = moduleTest(def, LEDGER_MODULES[i]);
	});
	return files;
}
