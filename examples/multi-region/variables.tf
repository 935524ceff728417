variable "name" {
  description = "Prefix of each Region's pipeline name (`<name>-<region>`) and of its components."
  type        = string
  default     = "orders"
}

variable "primary_region" {
  description = "The primary Region: its pipeline creates the global table, and publishes the events written without an origin."
  type        = string
  default     = "us-east-1"
}

variable "secondary_region" {
  description = "The second Region: the table's replica there is adopted by its own pipeline."
  type        = string
  default     = "us-west-2"
}

variable "table_name" {
  description = "Name of the orders table, a global table with a replica in each Region."
  type        = string
  default     = "orders"
}

variable "event_source" {
  description = "Source of the events the orders service writes."
  type        = string
  default     = "com.example.orders"
}

variable "takeover_after_seconds" {
  description = "How old a Region's heartbeat gets before the other Region takes its events over (at least 60)."
  type        = number
  default     = 900
}

variable "takeover_settle_seconds" {
  description = "How long a Region that claimed a silent one waits, for the claims to replicate, before it publishes the silent Region's events (below takeover_after_seconds)."
  type        = number
  default     = 30
}

variable "architecture" {
  description = "Instruction set of the relay functions: arm64 or x86_64."
  type        = string
  default     = "arm64"
}
