DROP INDEX "event_log_at_idx";--> statement-breakpoint
CREATE INDEX "event_log_at_brin" ON "event_log" USING brin ("at");