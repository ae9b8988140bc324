-- Reset codes are now digested with HMAC-SHA256 under a subkey of AUTH_KEY_SECRET (issue 32 #5). A code
-- issued under the old salted SHA-256 scheme can no longer be verified: retire it (a code lives 15
-- minutes; its user asks for a new one). The row stays, so it still counts towards the hourly cap.
UPDATE "password_reset_codes" SET "used_at" = now() WHERE "used_at" IS NULL;--> statement-breakpoint
ALTER TABLE "password_reset_codes" DROP COLUMN "code_salt";
