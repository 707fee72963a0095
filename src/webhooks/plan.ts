/** Who may use webhooks (spec 8): the check every webhook and delivery route applies itself. */
import { requirePlan } from "../http/require_plan.ts";

/** 403 PLAN_REQUIRED `Webhooks require Pro or Business plan` for any other plan. */
export const requireWebhookPlan = () =>
  requirePlan(["pro", "business"], "Webhooks require Pro or Business plan", "Webhooks");
