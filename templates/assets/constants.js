// Names and texts more than one script of the theme uses. (partials/theme-init.js, inline and run
// before any module, spells THEME_KEY out; tests/test_module_graph.py keeps the two the same.)

/** The localStorage key of the learner's light or dark choice. */
import { t } from "coursegen/messages.js";

export const THEME_KEY = "coursegen:theme";

/** The self-scores a question can get, in order, with the word each button shows. */
export const SCORE_LABELS = { yes: t("tally.yes"), partly: t("tally.partly"), no: t("tally.no") };
