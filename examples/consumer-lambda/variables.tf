variable "name" {
  description = "Name of the pipeline and prefix of the subscription."
  type        = string
  default     = "orders"
}

variable "event_source" {
  description = "Source of the orders service's events."
  type        = string
  default     = "com.example.orders"
}

variable "architecture" {
  description = "Architecture of the relay function: arm64 or x86_64."
  type        = string
  default     = "arm64"
}

variable "inbox_deletion_protection" {
  description = "Deletion protection of the inbox table. Set it to false, and apply, before destroying."
  type        = bool
  default     = true
}
