CREATE TABLE "signing_keys" (
	"kid" varchar(64) PRIMARY KEY NOT NULL,
	"generation" integer NOT NULL,
	"public_jwk" varchar(512) NOT NULL,
	"private_key" varchar(512) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"publish_at" timestamp with time zone NOT NULL,
	"sign_from" timestamp with time zone NOT NULL,
	"retire_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_generation_key" ON "signing_keys" USING btree ("generation");