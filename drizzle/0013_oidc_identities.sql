CREATE TABLE "oidc_flows" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "oidc_flows_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"state_digest" varchar(64) NOT NULL,
	"provider" varchar(15) NOT NULL,
	"user_id" integer,
	"session_public_id" uuid,
	"redirect_uri" varchar(2048) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oidc_identities" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "oidc_identities_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"public_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"user_id" integer NOT NULL,
	"provider" varchar(15) NOT NULL,
	"subject" varchar(255) NOT NULL,
	"email" varchar(254),
	"linked_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "oidc_login_codes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "oidc_login_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"digest" varchar(64) NOT NULL,
	"user_id" integer NOT NULL,
	"provider" varchar(15) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oidc_flows" ADD CONSTRAINT "oidc_flows_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_identities" ADD CONSTRAINT "oidc_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_login_codes" ADD CONSTRAINT "oidc_login_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_flows_state_digest_key" ON "oidc_flows" USING btree ("state_digest");--> statement-breakpoint
CREATE INDEX "oidc_flows_expires_at_idx" ON "oidc_flows" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_identities_provider_subject_key" ON "oidc_identities" USING btree ("provider","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_identities_user_provider_key" ON "oidc_identities" USING btree ("user_id","provider");--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_identities_public_id_key" ON "oidc_identities" USING btree ("public_id");--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_login_codes_digest_key" ON "oidc_login_codes" USING btree ("digest");--> statement-breakpoint
CREATE INDEX "oidc_login_codes_expires_at_idx" ON "oidc_login_codes" USING btree ("expires_at");