ALTER TABLE "password_reset_codes" ADD COLUMN "requester_failed_attempts" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "password_reset_codes" ADD COLUMN "requested_by" varchar(64);--> statement-breakpoint
ALTER TABLE "password_reset_codes" ADD COLUMN "password_tag" varchar(64);