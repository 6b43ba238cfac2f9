ALTER TABLE `accounts` ADD `default_country` text;
