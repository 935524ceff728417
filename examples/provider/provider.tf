provider "outbox" {
  region = "eu-west-1"

  default_tags {
    tags = {
      team = "orders"
    }
  }
}

# Against a local AWS stack (go run ./cmd/localaws):
provider "outbox" {
  alias                       = "local"
  region                      = "us-east-1"
  endpoint_url                = "http://127.0.0.1:4566"
  skip_credentials_validation = false
}
