"""What a person types or pastes, turned into tensors: tokens, embeddings, masks, pastes."""
