CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"first_log_id" bigint NOT NULL,
	"last_log_id" bigint NOT NULL,
	"events" integer NOT NULL,
	"attempts" integer NOT NULL,
	"last_error" text NOT NULL,
	"status" text NOT NULL,
	"parked_at" timestamp with time zone NOT NULL,
	"body" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"cursor" bigint NOT NULL,
	"holder" text,
	"lease_until" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_status_idx" ON "webhook_deliveries" USING btree ("status","parked_at");