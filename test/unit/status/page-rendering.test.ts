import { describe, expect, it } from "vitest";
import { centsText, money, priceText, signedMoney } from "../../../src/status/money-text.js";
import { NEXT_SHOWN, nextList } from "../../../src/status/status-figures.js";
import { activityChart, niceCeiling, valueChart } from "../../../src/status/svg-charts.js";

describe("money on the page", () => {
  it.each<[bigint, string]>([
    [68_786_802n, "$68.79"],
    [68_784_999n, "$68.78"],
    [5_000n, "$0.01"],
    [4_999n, "$0.00"],
    [-1_204_495_000n, "-$1,204.50"],
    [-4_000n, "$0.00"],
    [1_234_567_890_000_000n, "$1,234,567,890.00"],
  ])("%s micro-USD reads %s", (micro, text) => {
    expect(centsText(micro)).toBe(text);
  });

  it("puts the exact figure on hover", () => {
    expect(money(68_786_802n).text).toBe('<span class="money" title="$68.786802">$68.79</span>');
    expect(signedMoney(-90_000n).text).toBe('<span class="money down" title="-$0.09">-$0.09</span>');
    expect(signedMoney(1_500_000n).text).toContain(">+$1.50<");
    expect(money(null, "no bid").text).toBe("no bid");
    expect(priceText(652_512n).text).toBe('<span class="money" title="$0.652512">$0.6525</span>');
  });
});

describe("charts drawn on the server", () => {
  it("tops the axis at 1, 2 or 5 times a power of ten dollars", () => {
    expect([0n, 1n, 1_500_000n, 2_000_001n, 68_786_802n, 120_000_000n].map(niceCeiling)).toEqual([
      1_000_000n,
      1_000_000n,
      2_000_000n,
      5_000_000n,
      100_000_000n,
      200_000_000n,
    ]);
  });

  it("draws a day's claims and exits as bars in proportion, each with what it says on hover", () => {
    const svg = activityChart([
      { day: 1_800_000_000 - 86_400, claims: 0, claimedMicroUsd: 0n, exits: 1, exitedMicroUsd: 2_500_000n },
      { day: 1_800_000_000, claims: 2, claimedMicroUsd: 5_000_000n, exits: 0, exitedMicroUsd: 0n },
    ]).text;
    const heights = [...svg.matchAll(/<rect class="bar" [^>]*height="([\d.]+)"/g)].map((m) => Number(m[1]));
    // The axis tops at $5: the $5 claims fill the plot (140 units), the $2.50 exit half of it.
    expect(heights).toEqual([0, 70, 140, 0]);
    expect(svg).toContain("<title>01-15: 2 claim(s), $5.00</title>");
    expect(svg).not.toContain("style=");
  });

  it("draws the fleet's value through its samples, the newest last", () => {
    const svg = valueChart([
      { at: 1_800_000_000, valueMicroUsd: 10_000_000n },
      { at: 1_800_000_600, valueMicroUsd: 5_000_000n },
    ]).text;
    expect(svg).toMatch(/<polyline [^>]*points="64,12 628,82"/);
    expect(svg).toContain("UTC: $5.00</title>");
  });
});

describe("next steps", () => {
  it("lists the soonest, says how many more, and a due step as now", () => {
    const steps = Array.from({ length: NEXT_SHOWN + 3 }, (_, i) => ({
      text: `step ${i}`,
      at: 1_800_000_000 + i,
    }));
    const text = nextList(steps, 1_800_000_000).text;
    expect(text.match(/<li>/g)).toHaveLength(NEXT_SHOWN);
    expect(text).toContain('<li class="more">and 3 more</li>');
    expect(text).toContain('<time datetime="2027-01-15T08:00:00Z">now</time> step 0</li>');
    expect(nextList([], 0).text).toContain("Nothing planned");
  });
});
