// Spaced review with FSRS (the vendored ts-fsrs): a self-score becomes a rating and a next-due date.
// Short-term learning steps and fuzz are off, so intervals are whole days and repeatable.
import { t } from "coursegen/messages.js";

const RATING_OF = { yes: "Good", partly: "Hard", no: "Again" };

/** Return a scheduler over the ts-fsrs module: next(card, score, now) → the card to store. */
export function makeScheduler(fsrsModule) {
  const { fsrs, createEmptyCard, Rating, TypeConvert } = fsrsModule;
  const scheduler = fsrs({ enable_short_term: false, enable_fuzz: false });
  return {
    next(stored, score, now) {
      const card = stored ? TypeConvert.card(stored) : createEmptyCard(now);
      const next = scheduler.next(card, now, Rating[RATING_OF[score]]).card;
      return toStorable(next);
    },
  };
}

function toStorable(card) {
  const out = { ...card, due: card.due.toISOString() };
  if (card.last_review) out.last_review = card.last_review.toISOString();
  return out;
}

/** Return "today", "tomorrow" or "in N days" for a due date. */
export function dueText(due, now) {
  const days = Math.round((Date.parse(due) - now.getTime()) / 86400000);
  if (days <= 0) return t("schedule.today");
  return days === 1 ? t("schedule.tomorrow") : t("schedule.in_days", { days });
}

/** Return the sentence shown under a scored question about its next review. */
export function nextText(card, now) {
  if (!card) return "";
  if (Date.parse(card.due) <= now.getTime()) return t("schedule.due_now");
  return t("schedule.next", { when: dueText(card.due, now) });
}
