import { KNOWN_EVENT_CATEGORIES, type KnownEventCategory } from "../../core/event-details.js";

/** Text the generator draws on: subcategories, tags and question templates per category. */
export type WorldCategory = Exclude<KnownEventCategory, "all">;
/** Every usual category but `all` (a filter of the events list, not an event's category). */
export const WORLD_CATEGORIES: readonly WorldCategory[] = KNOWN_EVENT_CATEGORIES.filter(
  (category): category is WorldCategory => category !== "all",
);

interface Topic {
  readonly subcategories: readonly string[];
  readonly tags: readonly string[];
  /** Event titles; `{n}` is replaced by a number so titles stay distinct. */
  readonly titles: readonly string[];
  /** Market questions within an event. */
  readonly questions: readonly string[];
  readonly isTeam: boolean;
}

export const TOPICS: Record<WorldCategory, Topic> = {
  crypto: {
    subcategories: ["bitcoin", "ethereum", "solana", "memecoins"],
    tags: ["crypto", "price", "daily", "onchain"],
    titles: [
      "BTC price band week {n}",
      "SOL above threshold day {n}",
      "ETH close range {n}",
      "Meme index {n}",
    ],
    questions: ["Above the upper band?", "Below the lower band?", "Closes green?"],
    isTeam: false,
  },
  sports: {
    subcategories: ["football", "basketball", "tennis", "cricket"],
    tags: ["sports", "match", "league"],
    titles: [
      "Harbor City vs Northfield round {n}",
      "Open final set {n}",
      "Derby matchday {n}",
      "Cup quarter {n}",
    ],
    questions: ["Home side wins?", "Over 2.5 goals?", "Away side wins?"],
    isTeam: true,
  },
  politics: {
    subcategories: ["elections", "legislation", "polls"],
    tags: ["politics", "election", "vote"],
    titles: ["Council seat race {n}", "Budget bill passage {n}", "Approval poll {n}"],
    questions: ["Incumbent holds?", "Passes this session?", "Above 50 percent?"],
    isTeam: false,
  },
  esports: {
    subcategories: ["moba", "shooter", "strategy"],
    tags: ["esports", "tournament", "match"],
    titles: ["Arena league week {n}", "Masters bracket {n}", "Invitational final {n}"],
    questions: ["Blue team wins?", "Goes to game five?", "Map one upset?"],
    isTeam: true,
  },
  culture: {
    subcategories: ["film", "music", "awards", "streaming"],
    tags: ["culture", "entertainment", "awards"],
    titles: ["Box office weekend {n}", "Chart number one {n}", "Awards night {n}"],
    questions: ["Opens above forecast?", "Debuts at number one?", "Favourite wins?"],
    isTeam: false,
  },
  economics: {
    subcategories: ["rates", "inflation", "jobs"],
    tags: ["economics", "macro", "data"],
    titles: ["Rate decision {n}", "CPI print {n}", "Payrolls report {n}"],
    questions: ["Cut announced?", "Above consensus?", "Unemployment rises?"],
    isTeam: false,
  },
  tech: {
    subcategories: ["ai", "launches", "companies"],
    tags: ["tech", "launch", "ai"],
    titles: ["Model release {n}", "Device launch {n}", "Earnings call {n}"],
    questions: ["Ships before close?", "Beats estimates?", "Announces delay?"],
    isTeam: false,
  },
};
