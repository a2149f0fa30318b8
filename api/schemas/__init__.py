"""Request and response bodies of the API, separate from how the store keeps them."""
