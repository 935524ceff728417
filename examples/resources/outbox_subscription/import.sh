# A subscription is imported by its name (of its rule and queue); its queue
# policy names the rule's event bus.
terraform import outbox_subscription.billing billing-orders
