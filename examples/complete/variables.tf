variable "name" {
  description = "Name of the pipeline and prefix of its components."
  type        = string
  default     = "orders"
}

variable "table_name" {
  description = "Name of the orders table, which the pipeline creates."
  type        = string
  default     = "orders"
}

variable "event_source" {
  description = "Source of the events the orders service writes."
  type        = string
  default     = "com.example.orders"
}

variable "architecture" {
  description = "Instruction set of the relay functions: arm64 or x86_64."
  type        = string
  default     = "arm64"
}
