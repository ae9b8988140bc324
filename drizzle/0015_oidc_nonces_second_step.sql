CREATE TABLE "oidc_used_nonces" (
	"digest" varchar(64) PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ALTER COLUMN "auth_method" SET DATA TYPE varchar(40);--> statement-breakpoint
ALTER TABLE "sessions" ALTER COLUMN "auth_method" SET DEFAULT 'password';--> statement-breakpoint
ALTER TABLE "mfa_challenges" ADD COLUMN "first_factor" varchar(20) DEFAULT 'password' NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_used_nonces_expires_at_idx" ON "oidc_used_nonces" USING btree ("expires_at");