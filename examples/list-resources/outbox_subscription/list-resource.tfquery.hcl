# Every subscription of the provider's account and Region, with its
# configuration: `terraform query -generate-config-out=generated.tf` writes
# an import block and a resource block for each.
list "outbox_subscription" "all" {
  provider         = outbox
  include_resource = true
}
