"""The backend contract: the DynamoDB behaviours the notebooks rely on, checked on whichever backend is in use."""
