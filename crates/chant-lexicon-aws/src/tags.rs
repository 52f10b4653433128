//! Where a taggable resource keeps its tags, for the types that do not take the usual
//! `Tags: [{Key, Value}]`: a map (`Tags: {key: value}`) or another property
//! (`BackupPlanTags`). Read from the CloudFormation registry schemas cfn-lint 1.58.0 ships
//! (us-east-1), the same source the catalog was generated from; every other taggable type
//! takes the usual list.

/// How a type's tag property is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `[{Key, Value}]`.
    List,
    /// `{key: value}`.
    Map,
}

/// `(type, tag property, shape)` for every taggable type that differs from `Tags` as a list,
/// sorted by type.
const UNUSUAL: &[(&str, &str, Shape)] = &[
    ("AWS::ARCRegionSwitch::Plan", "Tags", Shape::Map),
    ("AWS::AmplifyUIBuilder::Component", "Tags", Shape::Map),
    ("AWS::AmplifyUIBuilder::Form", "Tags", Shape::Map),
    ("AWS::AmplifyUIBuilder::Theme", "Tags", Shape::Map),
    ("AWS::ApiGatewayV2::Api", "Tags", Shape::Map),
    ("AWS::ApiGatewayV2::DomainName", "Tags", Shape::Map),
    ("AWS::ApiGatewayV2::Stage", "Tags", Shape::Map),
    ("AWS::ApiGatewayV2::VpcLink", "Tags", Shape::Map),
    ("AWS::AppTest::TestCase", "Tags", Shape::Map),
    ("AWS::Backup::BackupPlan", "BackupPlanTags", Shape::Map),
    ("AWS::Backup::BackupVault", "BackupVaultTags", Shape::Map),
    ("AWS::Backup::Framework", "FrameworkTags", Shape::List),
    (
        "AWS::Backup::LogicallyAirGappedBackupVault",
        "BackupVaultTags",
        Shape::Map,
    ),
    ("AWS::Backup::ReportPlan", "ReportPlanTags", Shape::List),
    (
        "AWS::Backup::TieringConfiguration",
        "TieringConfigurationTags",
        Shape::Map,
    ),
    ("AWS::Batch::ComputeEnvironment", "Tags", Shape::Map),
    ("AWS::Batch::ConsumableResource", "Tags", Shape::Map),
    ("AWS::Batch::JobDefinition", "Tags", Shape::Map),
    ("AWS::Batch::JobQueue", "Tags", Shape::Map),
    ("AWS::Batch::QuotaShare", "Tags", Shape::Map),
    ("AWS::Batch::SchedulingPolicy", "Tags", Shape::Map),
    ("AWS::Batch::ServiceEnvironment", "Tags", Shape::Map),
    ("AWS::Bedrock::Agent", "Tags", Shape::Map),
    ("AWS::Bedrock::AgentAlias", "Tags", Shape::Map),
    ("AWS::Bedrock::Flow", "Tags", Shape::Map),
    ("AWS::Bedrock::FlowAlias", "Tags", Shape::Map),
    ("AWS::Bedrock::KnowledgeBase", "Tags", Shape::Map),
    ("AWS::Bedrock::Prompt", "Tags", Shape::Map),
    ("AWS::Bedrock::PromptVersion", "Tags", Shape::Map),
    ("AWS::BedrockAgentCore::BrowserCustom", "Tags", Shape::Map),
    ("AWS::BedrockAgentCore::BrowserProfile", "Tags", Shape::Map),
    (
        "AWS::BedrockAgentCore::CodeInterpreterCustom",
        "Tags",
        Shape::Map,
    ),
    ("AWS::BedrockAgentCore::Gateway", "Tags", Shape::Map),
    ("AWS::BedrockAgentCore::Memory", "Tags", Shape::Map),
    ("AWS::BedrockAgentCore::Runtime", "Tags", Shape::Map),
    ("AWS::BedrockAgentCore::RuntimeEndpoint", "Tags", Shape::Map),
    ("AWS::Budgets::Budget", "ResourceTags", Shape::List),
    ("AWS::Budgets::BudgetsAction", "ResourceTags", Shape::List),
    ("AWS::CE::AnomalyMonitor", "ResourceTags", Shape::List),
    ("AWS::CE::AnomalySubscription", "ResourceTags", Shape::List),
    ("AWS::CloudFront::AnycastIpList", "Tags", Shape::Map),
    (
        "AWS::CodeStarNotifications::NotificationRule",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::Cognito::IdentityPool",
        "IdentityPoolTags",
        Shape::List,
    ),
    ("AWS::Cognito::UserPool", "UserPoolTags", Shape::Map),
    (
        "AWS::Cognito::UserPoolRegionalConfigurationAttachment",
        "UserPoolTags",
        Shape::Map,
    ),
    (
        "AWS::Cognito::UserPoolReplica",
        "UserPoolTagsAtCreate",
        Shape::Map,
    ),
    ("AWS::DataPipeline::Pipeline", "PipelineTags", Shape::List),
    ("AWS::EFS::AccessPoint", "AccessPointTags", Shape::List),
    ("AWS::EFS::FileSystem", "FileSystemTags", Shape::List),
    ("AWS::EKS::Nodegroup", "Tags", Shape::Map),
    ("AWS::ElementalInference::Dictionary", "Tags", Shape::Map),
    ("AWS::ElementalInference::Feed", "Tags", Shape::Map),
    ("AWS::FIS::ExperimentTemplate", "Tags", Shape::Map),
    ("AWS::Glue::Connection", "Tags", Shape::Map),
    ("AWS::Glue::Crawler", "Tags", Shape::Map),
    ("AWS::Glue::DataQualityRuleset", "Tags", Shape::Map),
    ("AWS::Glue::Job", "Tags", Shape::Map),
    ("AWS::Glue::MLTransform", "Tags", Shape::Map),
    ("AWS::Glue::Trigger", "Tags", Shape::Map),
    ("AWS::Glue::Workflow", "Tags", Shape::Map),
    ("AWS::GreengrassV2::ComponentVersion", "Tags", Shape::Map),
    ("AWS::GreengrassV2::Deployment", "Tags", Shape::Map),
    ("AWS::HealthImaging::Datastore", "Tags", Shape::Map),
    ("AWS::ImageBuilder::Component", "Tags", Shape::Map),
    ("AWS::ImageBuilder::ContainerRecipe", "Tags", Shape::Map),
    (
        "AWS::ImageBuilder::DistributionConfiguration",
        "Tags",
        Shape::Map,
    ),
    ("AWS::ImageBuilder::Image", "Tags", Shape::Map),
    ("AWS::ImageBuilder::ImagePipeline", "Tags", Shape::Map),
    ("AWS::ImageBuilder::ImageRecipe", "Tags", Shape::Map),
    (
        "AWS::ImageBuilder::InfrastructureConfiguration",
        "Tags",
        Shape::Map,
    ),
    ("AWS::ImageBuilder::LifecyclePolicy", "Tags", Shape::Map),
    ("AWS::ImageBuilder::Workflow", "Tags", Shape::Map),
    ("AWS::InspectorV2::CisScanConfiguration", "Tags", Shape::Map),
    (
        "AWS::InspectorV2::CodeSecurityIntegration",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::InspectorV2::CodeSecurityScanConfiguration",
        "Tags",
        Shape::Map,
    ),
    ("AWS::InspectorV2::Filter", "Tags", Shape::Map),
    ("AWS::Invoicing::InvoiceUnit", "ResourceTags", Shape::List),
    ("AWS::IoTTwinMaker::ComponentType", "Tags", Shape::Map),
    ("AWS::IoTTwinMaker::Entity", "Tags", Shape::Map),
    ("AWS::IoTTwinMaker::Scene", "Tags", Shape::Map),
    ("AWS::IoTTwinMaker::SyncJob", "Tags", Shape::Map),
    ("AWS::IoTTwinMaker::Workspace", "Tags", Shape::Map),
    ("AWS::Lex::Bot", "BotTags", Shape::List),
    ("AWS::Lex::BotAlias", "BotAliasTags", Shape::List),
    ("AWS::M2::Application", "Tags", Shape::Map),
    ("AWS::M2::Environment", "Tags", Shape::Map),
    ("AWS::MSK::Channel", "Tags", Shape::Map),
    ("AWS::MSK::Cluster", "Tags", Shape::Map),
    ("AWS::MSK::ServerlessCluster", "Tags", Shape::Map),
    ("AWS::MSK::VpcConnection", "Tags", Shape::Map),
    ("AWS::MWAA::Environment", "Tags", Shape::Map),
    ("AWS::MWAAServerless::Workflow", "Tags", Shape::Map),
    ("AWS::MediaConvert::JobTemplate", "Tags", Shape::Map),
    ("AWS::MediaConvert::Preset", "Tags", Shape::Map),
    ("AWS::MediaConvert::Queue", "Tags", Shape::Map),
    (
        "AWS::MediaLive::CloudWatchAlarmTemplate",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::MediaLive::CloudWatchAlarmTemplateGroup",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::MediaLive::EventBridgeRuleTemplate",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::MediaLive::EventBridgeRuleTemplateGroup",
        "Tags",
        Shape::Map,
    ),
    ("AWS::MediaLive::Input", "Tags", Shape::Map),
    ("AWS::MediaLive::InputSecurityGroup", "Tags", Shape::Map),
    ("AWS::MediaLive::SignalMap", "Tags", Shape::Map),
    ("AWS::Oam::Link", "Tags", Shape::Map),
    ("AWS::Oam::Sink", "Tags", Shape::Map),
    ("AWS::Omics::AnnotationStore", "Tags", Shape::Map),
    ("AWS::Omics::Configuration", "Tags", Shape::Map),
    ("AWS::Omics::ReferenceStore", "Tags", Shape::Map),
    ("AWS::Omics::RunGroup", "Tags", Shape::Map),
    ("AWS::Omics::SequenceStore", "Tags", Shape::Map),
    ("AWS::Omics::VariantStore", "Tags", Shape::Map),
    ("AWS::Omics::Workflow", "Tags", Shape::Map),
    ("AWS::Omics::WorkflowVersion", "Tags", Shape::Map),
    ("AWS::PCAConnectorAD::Connector", "Tags", Shape::Map),
    (
        "AWS::PCAConnectorAD::DirectoryRegistration",
        "Tags",
        Shape::Map,
    ),
    ("AWS::PCAConnectorAD::Template", "Tags", Shape::Map),
    ("AWS::PCAConnectorSCEP::Challenge", "Tags", Shape::Map),
    ("AWS::PCAConnectorSCEP::Connector", "Tags", Shape::Map),
    ("AWS::PCS::Cluster", "Tags", Shape::Map),
    ("AWS::PCS::ComputeNodeGroup", "Tags", Shape::Map),
    ("AWS::PCS::Queue", "Tags", Shape::Map),
    ("AWS::Pinpoint::InAppTemplate", "Tags", Shape::Map),
    ("AWS::Pipes::Pipe", "Tags", Shape::Map),
    ("AWS::ResilienceHub::App", "Tags", Shape::Map),
    ("AWS::ResilienceHub::ResiliencyPolicy", "Tags", Shape::Map),
    ("AWS::ResourceExplorer2::Index", "Tags", Shape::Map),
    ("AWS::ResourceExplorer2::View", "Tags", Shape::Map),
    ("AWS::Route53::HealthCheck", "HealthCheckTags", Shape::List),
    ("AWS::Route53::HostedZone", "HostedZoneTags", Shape::List),
    ("AWS::SSM::Parameter", "Tags", Shape::Map),
    (
        "AWS::SSMQuickSetup::ConfigurationManager",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::SSMQuickSetup::LifecycleAutomation",
        "Tags",
        Shape::Map,
    ),
    ("AWS::SecurityHub::AggregatorV2", "Tags", Shape::Map),
    ("AWS::SecurityHub::AutomationRule", "Tags", Shape::Map),
    ("AWS::SecurityHub::AutomationRuleV2", "Tags", Shape::Map),
    ("AWS::SecurityHub::ConfigurationPolicy", "Tags", Shape::Map),
    ("AWS::SecurityHub::Connector", "Tags", Shape::Map),
    ("AWS::SecurityHub::ConnectorV2", "Tags", Shape::Map),
    ("AWS::SecurityHub::Hub", "Tags", Shape::Map),
    ("AWS::SecurityHub::HubV2", "Tags", Shape::Map),
    (
        "AWS::ServiceCatalogAppRegistry::Application",
        "Tags",
        Shape::Map,
    ),
    (
        "AWS::ServiceCatalogAppRegistry::AttributeGroup",
        "Tags",
        Shape::Map,
    ),
    ("AWS::Wisdom::AIAgent", "Tags", Shape::Map),
    ("AWS::Wisdom::AIGuardrail", "Tags", Shape::Map),
    ("AWS::Wisdom::AIPrompt", "Tags", Shape::Map),
];

/// The tag property of a taggable type and its shape.
pub fn property(resource_type: &str) -> (&'static str, Shape) {
    UNUSUAL
        .binary_search_by(|(t, _, _)| (*t).cmp(resource_type))
        .map(|i| (UNUSUAL[i].1, UNUSUAL[i].2))
        .unwrap_or(("Tags", Shape::List))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusual_tag_properties_are_known() {
        assert!(UNUSUAL.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(property("AWS::S3::Bucket"), ("Tags", Shape::List));
        assert_eq!(property("AWS::SSM::Parameter"), ("Tags", Shape::Map));
        assert_eq!(
            property("AWS::Backup::BackupPlan"),
            ("BackupPlanTags", Shape::Map)
        );
    }
}
