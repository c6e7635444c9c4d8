CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`taken_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `nodes` (
	`id` text PRIMARY KEY NOT NULL,
	`host` text NOT NULL,
	`role` text NOT NULL,
	`version` text NOT NULL,
	`pid` integer NOT NULL,
	`started_at` integer NOT NULL,
	`last_seen` integer NOT NULL,
	`jobs` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `nodes_last_seen_idx` ON `nodes` (`last_seen`);