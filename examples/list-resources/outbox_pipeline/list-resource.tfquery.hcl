# Every pipeline of the provider's account and Region whose name starts with
# "orders", with its configuration: `terraform query
# -generate-config-out=generated.tf` writes an import block and a resource
# block for each.
list "outbox_pipeline" "orders" {
  provider         = outbox
  include_resource = true

  config {
    name_prefix = "orders"
  }
}
